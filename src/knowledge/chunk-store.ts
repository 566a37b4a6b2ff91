/**
 * Writing a document's chunks (docs/api/knowledge.md, "Chunks"): their embeddings, and the
 * insert of their rows, shared by ingestion (./ingest.ts) and syncs (./sync.ts).
 */
import { embedMany } from 'ai'
import { uuidv7 } from 'uuidv7'
import type { Em } from '../platform/db.ts'
import type { KnowledgeEmbedding } from '../models/index.ts'

/** Chunks per embedding call and per insert statement. */
export const BATCH = 128

/**
 * Every text's embedding, {@link BATCH} texts per call; `onUsage` is told each call's tokens.
 * @throws the upstream's error.
 */
export async function embedAll(embedding: KnowledgeEmbedding, texts: string[], onUsage: (tokens: number) => Promise<void>): Promise<number[][]> {
  const vectors: number[][] = []
  for (let start = 0; start < texts.length; start += BATCH) {
    const { embeddings, usage } = await embedMany({ model: embedding.model, values: texts.slice(start, start + BATCH), maxRetries: 0 })
    await onUsage(usage.tokens)
    vectors.push(...embeddings)
  }
  return vectors
}

/**
 * Inserts `chunks` of document `doc` with `em` (inside the caller's transaction), with their
 * `vectors` (same order) made by model `embeddingKey`, or none.
 */
export async function insertChunks(
  em: Em,
  doc: { id: number; agentId: number },
  chunks: { index: number; text: string; tokens: number }[],
  vectors: number[][] | null,
  embeddingKey: string | null,
): Promise<void> {
  for (let start = 0; start < chunks.length; start += BATCH) {
    const rows = chunks.slice(start, start + BATCH).map((chunk, offset) => ({
      uuid: uuidv7(),
      position: chunk.index,
      text: chunk.text.replaceAll('\u0000', ''),
      tokens: chunk.tokens,
      embedding: vectors ? `[${vectors[start + offset].join(',')}]` : null,
    }))
    await em.execute(
      `insert into knowledge_chunks (uuid, document_id, agent_id, position, text, tokens, embedding_model, created_at${vectors ? ', embedding' : ''})
       select x.uuid, ?, ?, x.position, x.text, x.tokens, ?, now()${vectors ? ', x.embedding::vector' : ''}
       from jsonb_to_recordset(?::jsonb) as x(uuid uuid, position int, text text, tokens int, embedding text)`,
      [doc.id, doc.agentId, vectors ? embeddingKey : null, JSON.stringify(rows)],
    )
  }
}
