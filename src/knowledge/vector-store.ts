/**
 * Whether knowledge retrieval is hybrid or full-text (docs/api/knowledge.md, "Retrieval"):
 * hybrid where the database has pgvector (PGlite loads it: src/platform/db.ts; PostgreSQL when
 * `CREATE EXTENSION vector` succeeds), full-text otherwise. The `embedding` column of
 * `knowledge_chunks` is added here, at start, rather than in a migration, so the same migrations
 * serve a database with pgvector and one without, and a database that gains pgvector later
 * gains the column at its next start.
 */
import type { Orm } from '../platform/db.ts'

/** `hybrid`: full-text and vector rankings fused; `full-text`: the full-text ranking alone. */
export type RetrievalMode = 'hybrid' | 'full-text'

/**
 * Enables pgvector and the `embedding` column where possible; idempotent, safe for several
 * processes starting at once (`if not exists`). Never throws for a missing extension: the mode
 * is then `full-text`.
 * @throws the database's error when it cannot be reached.
 */
export async function prepareVectorStore(orm: Orm): Promise<RetrievalMode> {
  const em = orm.em.fork()
  const [available] = await em.execute<{ found: boolean }[]>(`select exists (select 1 from pg_available_extensions where name = 'vector') as found`)
  if (!available?.found) return 'full-text'
  try {
    await em.execute('create extension if not exists vector')
    await em.execute('alter table knowledge_chunks add column if not exists embedding vector')
    return 'hybrid'
  } catch {
    // Listed but not creatable (no privilege, say): full-text retrieval still works.
    return 'full-text'
  }
}
