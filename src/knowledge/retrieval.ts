/**
 * Knowledge retrieval (docs/api/knowledge.md, "Retrieval"): the best chunks of one agent for a
 * query. Full-text: the query's lexemes (English stemming, stop words dropped) against the
 * chunks' `tsv` (GIN index), ranked by `ts_rank_cd`: chunks holding all of them first, then,
 * when those are too few, chunks holding any of them. Vector, in hybrid mode when the
 * query could be embedded: cosine distance to the chunks embedded by the same model. The two
 * rankings are fused by reciprocal rank fusion, `score = Σ 1 / (60 + rank)` over the rankings a
 * chunk appears in (rank from 1); with one ranking the score is that one term. Ties: the lower
 * chunk id (the earlier trained) first.
 */
import { embed } from 'ai'
import type { Em } from '../platform/db.ts'
import type { KnowledgeEmbedding } from '../models/index.ts'
import type { RetrievalMode } from './vector-store.ts'

/** Reciprocal rank fusion's constant (Cormack et al., 2009). */
export const RRF_K = 60
/** Candidates each ranking contributes, per chunk asked for. */
const CANDIDATES_PER_RESULT = 4

/** A retrieved chunk, as search answers it and a run is given it. */
export interface RetrievedChunk {
  chunkUuid: string
  documentUuid: string
  documentName: string
  text: string
  score: number
}

/** How the query was matched. */
export interface Retrieval {
  chunks: RetrievedChunk[]
  /** Which rankings were fused: `full-text`, or `hybrid` when the vector ranking took part. */
  mode: RetrievalMode
}

/**
 * The `limit` best chunks of agent `agentId` for `query`, best first.
 * @param o.embedding the model to embed the query with (the agent's provider, the caller's
 *   credential); null, or `mode` full-text: full-text ranking only. An embedding call that fails
 *   falls back to full-text (reported through `onEmbeddingError`), so retrieval never fails a run.
 * @throws the database's error.
 */
export async function retrieve(
  em: Em,
  o: {
    agentId: number
    query: string
    limit: number
    mode: RetrievalMode
    embedding: KnowledgeEmbedding | null
    onEmbeddingError?: (error: unknown) => void
    /** Told the tokens the query's embedding used (usage and budgets). */
    onEmbeddingUsage?: (tokens: number) => void
  },
): Promise<Retrieval> {
  const candidates = o.limit * CANDIDATES_PER_RESULT
  const vector = o.mode === 'hybrid' && o.embedding ? await embedQuery(o.embedding, o.query, o) : null
  // Chunks holding every term of the query rank first; chunks holding any of them are ranked only
  // when fewer than `limit` hold them all (a gated CTE: PostgreSQL skips its scan otherwise), so a
  // question with a common word does not score a large share of the agent's chunks.
  const ranked = `with terms as (
      select string_agg(term, ' & ') as all_terms, string_agg(term, ' | ') as any_term
      from (select '''' || replace(lexeme, '''', '''''') || '''' as term from unnest(to_tsvector('english', ?::text))) t),
    q as (select to_tsquery('simple', coalesce(all_terms, '')) as all_q, to_tsquery('simple', coalesce(any_term, '')) as any_q from terms),
    all_hits as (
      select c.id, ts_rank_cd(c.tsv, q.all_q) as r from knowledge_chunks c, q where c.agent_id = ? and c.tsv @@ q.all_q
      order by r desc, c.id limit ?),
    any_hits as (
      select c.id, ts_rank_cd(c.tsv, q.any_q) as r from knowledge_chunks c, q
      where c.agent_id = ? and c.tsv @@ q.any_q and (select count(*) from all_hits) < ?
      order by r desc, c.id limit ?),
    text_ranked as (
      select id, row_number() over (order by tier, r desc, id) as rank
      from (select id, r, 0 as tier from all_hits
            union all select id, r, 1 as tier from any_hits where id not in (select id from all_hits)) hits
      order by rank limit ?)`
  // The any-term ranking runs only when fewer chunks than asked for hold every term.
  const params: unknown[] = [o.query, o.agentId, candidates, o.agentId, o.limit, candidates, candidates]
  let fused: string
  if (vector) {
    // The nearest few first, then numbered: the sort never ranks every chunk of the agent.
    fused = `${ranked},
    vector_ranked as (
      select id, row_number() over (order by distance, id) as rank from (
        select c.id, c.embedding <=> ?::vector as distance
        from knowledge_chunks c where c.agent_id = ? and c.embedding_model = ? and c.embedding is not null
        order by distance, c.id limit ?) nearest),
    fused as (
      select id, sum(1.0 / (${RRF_K} + rank)) as score from (select * from text_ranked union all select * from vector_ranked) r group by id)`
    params.push(`[${vector.join(',')}]`, o.agentId, o.embedding?.key, candidates)
  } else {
    fused = `${ranked},
    fused as (select id, 1.0 / (${RRF_K} + rank) as score from text_ranked)`
  }
  params.push(o.limit)
  const rows = await em.execute<{ chunkUuid: string; documentUuid: string; documentName: string; text: string; score: string | number }[]>(
    `${fused}
     select c.uuid as "chunkUuid", d.uuid as "documentUuid", d.name as "documentName", c.text, f.score::float8 as score
     from fused f join knowledge_chunks c on c.id = f.id join knowledge_documents d on d.id = c.document_id
     order by f.score desc, c.id limit ?`,
    params,
  )
  return {
    chunks: rows.map((row) => ({ ...row, score: Math.round(Number(row.score) * 1e6) / 1e6 })),
    mode: vector ? 'hybrid' : 'full-text',
  }
}

/** The query's vector, or null when the embedding call failed. */
async function embedQuery(
  embedding: KnowledgeEmbedding,
  query: string,
  o: { onEmbeddingError?: (error: unknown) => void; onEmbeddingUsage?: (tokens: number) => void },
): Promise<number[] | null> {
  try {
    const { embedding: vector, usage } = await embed({ model: embedding.model, value: query, maxRetries: 0 })
    o.onEmbeddingUsage?.(usage.tokens)
    return vector
  } catch (error) {
    o.onEmbeddingError?.(error)
    return null
  }
}
