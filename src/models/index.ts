/**
 * The models capability's public surface: the only module routers, the HTTP host, the runtime and
 * other capabilities import from src/models/ (docs/architecture.md, "Rules").
 */
export { resolveAgentModel, resolveFor } from './agent-model.ts'
export { completeText } from './complete.ts'
export { CreateModelInput, LargeLanguageModel, ModelListInput, ModelPathInput, ModelRef, ModelRefInput, UpdateModelInput } from './model.schema.ts'
export * as models from './models.service.ts'
export { costOf, type KnowledgeEmbedding, modelBySlugSql, type ResolvedModel, resolveModel, type WebSearchOffer } from './registry.ts'
export { type Checked, checkWith, generateStructured, issueLines } from './structured-generate.ts'
export { modelCallTracing, providerNameOf, traceModelCalls } from './model-tracing.ts'
