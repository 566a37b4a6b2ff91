/**
 * Knowledge retrieval (docs/api/knowledge.md, "Retrieval"): the best chunks of one agent for a
 * query. Full-text: the query's lexemes (English stemming, stop words dropped) weighed by how
 * rare they are among the agent's chunks (`knowledge_lexemes`, kept by triggers), and the chunks
 * ranked by the summed weight of the lexemes they hold, then by `ts_rank_cd` ({@link lexemeGroups};
 * each group of lexemes is one AND query of the GIN index, so the chunks holding a lexeme most
 * chunks hold are never all read or ranked). Vector, in hybrid mode when the query could be
 * embedded: cosine distance to the chunks embedded by the same model. The two rankings are fused by reciprocal rank fusion,
 * `score = Σ 1 / (60 + rank)` over the rankings a chunk appears in (rank from 1); with one ranking
 * the score is that one term. Ties: the lower chunk id (the earlier trained) first.
 */
import { embed } from 'ai'
import type { Em } from '../platform/db.ts'
import type { KnowledgeEmbedding } from '../models/index.ts'
import type { RetrievalMode } from './vector-store.ts'

/** Reciprocal rank fusion's constant (Cormack et al., 2009). */
export const RRF_K = 60
/** Candidates each ranking contributes, per chunk asked for. */
const CANDIDATES_PER_RESULT = 4
/** The query's rarest lexemes that the full-text ranking weighs (the others are left out): at most 15 groups. */
export const RANKED_LEXEMES = 4

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
 * The `limit` best chunks of agent `agentId` for `query`, best first: two statements, the
 * lexemes' counts ({@link weighLexemes}), then the rankings, their fusion and the chunks.
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
  // The embedding call and the counts' statement overlap.
  const [vector, lexemes] = await Promise.all([
    o.mode === 'hybrid' && o.embedding ? embedQuery(o.embedding, o.query, o) : null,
    weighLexemes(em, o.agentId, o.query),
  ])
  const groups = lexemeGroups(lexemes)
  if (!vector && !groups.length) return { chunks: [], mode: 'full-text' }
  // The groups' AND queries, in turn until `candidates` chunks are found: knowledge_full_text_ranking
  // (src/migrations/Migration20261129170000_knowledge_retrieval.ts); in a group, the first
  // `candidates` chunks the index finds, by ts_rank_cd with the group's lexemes, then by id.
  const text = `with text_ranked as (select id, rank from knowledge_full_text_ranking(?, ?::jsonb, ?))`
  const params: unknown[] = [o.agentId, JSON.stringify(groups.map((group) => tsqueryOf(group.map((lexeme) => lexeme.lexeme)))), candidates]
  let fused: string
  if (vector) {
    // The nearest few first, then numbered: the sort never ranks every chunk of the agent.
    fused = `${text},
    vector_ranked as (
      select id, row_number() over (order by distance, id) as rank from (
        select c.id, c.embedding <=> ?::vector as distance
        from knowledge_chunks c where c.agent_id = ? and c.embedding_model = ? and c.embedding is not null
        order by distance, c.id limit ?) nearest),
    fused as (
      select id, sum(1.0 / (${RRF_K} + rank)) as score from (select * from text_ranked union all select * from vector_ranked) r group by id)`
    params.push(`[${vector.join(',')}]`, o.agentId, o.embedding?.key, candidates)
  } else {
    fused = `${text},
    fused as (select id, 1.0 / (${RRF_K} + rank) as score from text_ranked)`
  }
  params.push(o.limit)
  // Only the chunks answered are read (their text lives in TOAST).
  const rows = await em.execute<{ chunkUuid: string; documentUuid: string; documentName: string; text: string; score: string | number }[]>(
    `${fused},
    best as (select id, score from fused order by score desc, id limit ?)
    select c.uuid as "chunkUuid", d.uuid as "documentUuid", d.name as "documentName", c.text, b.score::float8 as score
    from best b join knowledge_chunks c on c.id = b.id join knowledge_documents d on d.id = c.document_id
    order by b.score desc, c.id`,
    params,
  )
  return {
    chunks: rows.map((row) => ({ ...row, score: Math.round(Number(row.score) * 1e6) / 1e6 })),
    mode: vector ? 'hybrid' : 'full-text',
  }
}

/** A lexeme of the query, with how many of the agent's chunks hold it and its weight. */
export interface WeighedLexeme {
  lexeme: string
  chunks: number
  weight: number
}

/**
 * The query's lexemes that some chunk of the agent holds, rarest first (ties by the lexeme), at
 * most {@link RANKED_LEXEMES}, each weighed `ln(1 + N / n)`: N the agent's chunks, n those
 * holding it.
 */
async function weighLexemes(em: Em, agentId: number, query: string): Promise<WeighedLexeme[]> {
  const rows = await em.execute<{ lexeme: string; chunks: number }[]>(
    `select l.lexeme, coalesce(s.chunks, 0)::int as chunks
     from (select unnest(tsvector_to_array(to_tsvector('english', ?::text))) union all select '') l(lexeme)
     left join knowledge_lexemes s on s.agent_id = ? and s.lexeme = l.lexeme`,
    [query, agentId],
  )
  const total = rows.find((row) => row.lexeme === '')?.chunks ?? 0
  return rows
    .filter((row) => row.lexeme !== '' && row.chunks > 0)
    .sort((a, b) => a.chunks - b.chunks || (a.lexeme < b.lexeme ? -1 : 1))
    .slice(0, RANKED_LEXEMES)
    .map((row) => ({ lexeme: row.lexeme, chunks: row.chunks, weight: Math.log(1 + Math.max(total, row.chunks) / row.chunks) }))
}

/**
 * The groups of the full-text ranking, best first: every non-empty set of `lexemes`, by summed
 * weight (ties: the larger set, then the set of rarer lexemes). A chunk belongs to the first
 * group whose lexemes it all holds, which is the set of those lexemes it holds: so the chunks
 * holding every lexeme come first, and one rare lexeme outweighs several that most chunks hold.
 */
export function lexemeGroups(lexemes: WeighedLexeme[]): WeighedLexeme[][] {
  const groups: { members: WeighedLexeme[]; weight: number; mask: number }[] = []
  for (let mask = 1; mask < 1 << lexemes.length; mask++) {
    const members = lexemes.filter((_, index) => mask & (1 << index))
    groups.push({ members, mask, weight: members.reduce((sum, lexeme) => sum + lexeme.weight, 0) })
  }
  const rarer = (a: number, b: number) => {
    // The set whose rarest differing lexeme is rarer (lower index) first.
    const differing = a ^ b
    const lowest = differing & -differing
    return a & lowest ? -1 : 1
  }
  return groups
    .sort((a, b) => b.weight - a.weight || b.members.length - a.members.length || rarer(a.mask, b.mask))
    .map((group) => group.members)
}

/** The tsquery (text form, for `::tsquery`) matching chunks that hold all of `lexemes`, taken as they are (no parser, no dictionary). */
export function tsqueryOf(lexemes: string[]): string {
  return lexemes.map((lexeme) => `'${lexeme.replaceAll('\\', '\\\\').replaceAll("'", "''")}'`).join(' & ')
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
