/**
 * The knowledge capability's public surface: the only module routers, the HTTP host, the runtime and
 * other capabilities import from src/knowledge/ (docs/architecture.md, "Rules").
 */
export { KnowledgeEngine } from './ingest.ts'
export { Citation, KnowledgeChunk, KnowledgeChunksInput, KnowledgeCrawlInput, KnowledgeUpdateInput, KnowledgeDocument, KnowledgeDocumentEnvelope, KnowledgeDocumentsEnvelope, KnowledgeListInput, KnowledgePathInput, KnowledgeRefresh, KnowledgeSearchEnvelope, KnowledgeSearchInput, KnowledgeText, KnowledgeTextName, KnowledgeUrl, type TCitation, type TKnowledgeSource, TrainAgentInput } from './knowledge.schema.ts'
export * as knowledge from './knowledge.service.ts'
export { knowledgeForRun, planSources, type PlannedDocument, queueTrainedFiles, removeAgentKnowledge, storeDocuments, syncAgentFiles } from './knowledge.service.ts'
