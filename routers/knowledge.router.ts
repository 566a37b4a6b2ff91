/**
 * Agent knowledge (specification: "Train an Agent"; docs/api/knowledge.md): train, list,
 * retrieve, update (a URL's refresh), sync, delete and retry documents, read a document's chunks, and search
 * what a run would be given.
 */
import { z } from 'zod'
import { knowledge } from '../src/knowledge/index.ts'
import { KnowledgeChunk, KnowledgeChunksInput, KnowledgeUpdateInput, KnowledgeDocument, KnowledgeDocumentEnvelope, KnowledgeDocumentsEnvelope, KnowledgeListInput, KnowledgePathInput, KnowledgeSearchEnvelope, KnowledgeSearchInput, TrainAgentInput } from '../src/knowledge/index.ts'
import { paginated } from '../src/access/wire.ts'
import { router, workspaceProcedure } from '../src/trpc/init.ts'

const tags = ['Knowledge']
const agentPath = '/api/v1/agents/{agent_uuid}'
const documentPath = '/api/v1/knowledge/{document_uuid}'

export const knowledgeRouter = router({
  train: workspaceProcedure
    .meta({
      openapi: { method: 'POST', path: `${agentPath}/train`, tags, summary: 'Train an agent from text, uploaded files, URLs and the sites under them (write permission)', protect: true },
      successStatus: 202,
    })
    .input(TrainAgentInput)
    .output(KnowledgeDocumentsEnvelope)
    .mutation(({ ctx, input }) => knowledge.train(ctx, input)),

  list: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: `${agentPath}/knowledge`, tags, summary: "An agent's knowledge documents, filtered and paginated", protect: true } })
    .input(KnowledgeListInput)
    .output(paginated(KnowledgeDocument))
    .query(({ ctx, input }) => knowledge.list(ctx, input)),

  search: workspaceProcedure
    .meta({
      openapi: { method: 'POST', path: `${agentPath}/knowledge/search`, tags, summary: "The chunks of an agent's knowledge a run would be given", protect: true },
      readOnlyAllowed: true,
    })
    .input(KnowledgeSearchInput)
    .output(KnowledgeSearchEnvelope)
    .mutation(({ ctx, input }) => knowledge.search(ctx, input)),

  retrieve: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: documentPath, tags, summary: 'Retrieve a knowledge document', protect: true } })
    .input(KnowledgePathInput)
    .output(KnowledgeDocumentEnvelope)
    .query(({ ctx, input }) => knowledge.retrieveDocument(ctx, input.document_uuid)),

  chunks: workspaceProcedure
    .meta({
      openapi: { method: 'GET', path: `${documentPath}/chunks`, tags, summary: "A knowledge document's chunks, in document order, paginated", protect: true },
    })
    .input(KnowledgeChunksInput)
    .output(paginated(KnowledgeChunk))
    .query(({ ctx, input }) => knowledge.listChunks(ctx, input)),

  update: workspaceProcedure
    .meta({ openapi: { method: 'PUT', path: documentPath, tags, summary: "Change how often a URL document is synced with its page (write permission)", protect: true } })
    .input(KnowledgeUpdateInput)
    .output(KnowledgeDocumentEnvelope)
    .mutation(({ ctx, input }) => knowledge.updateDocument(ctx, input)),

  sync: workspaceProcedure
    .meta({
      openapi: { method: 'POST', path: `${documentPath}/sync`, tags, summary: 'Sync a URL document with its page now (write permission)', protect: true },
      successStatus: 202,
    })
    .input(KnowledgePathInput)
    .output(KnowledgeDocumentEnvelope)
    .mutation(({ ctx, input }) => knowledge.syncDocument(ctx, input.document_uuid)),

  delete: workspaceProcedure
    .meta({ openapi: { method: 'DELETE', path: documentPath, tags, summary: 'Delete a knowledge document and its chunks (write permission)', protect: true }, successStatus: 204 })
    .input(KnowledgePathInput)
    .output(z.void())
    .mutation(({ ctx, input }) => knowledge.removeDocument(ctx, input.document_uuid)),

  retry: workspaceProcedure
    .meta({
      openapi: { method: 'POST', path: `${documentPath}/retry`, tags, summary: 'Ingest a failed knowledge document again (write permission)', protect: true },
      successStatus: 202,
    })
    .input(KnowledgePathInput)
    .output(KnowledgeDocumentEnvelope)
    .mutation(({ ctx, input }) => knowledge.retry(ctx, input.document_uuid)),
})
