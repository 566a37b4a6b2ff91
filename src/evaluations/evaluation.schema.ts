/**
 * Evaluation wire shapes (docs/api/evaluations.md, "Evaluations") and the row -> wire mappers: the
 * Evaluation with its progress, per-scorer summary, usage and latency percentiles; one item's
 * result; the comparison of two evaluations of one dataset.
 */
import { z } from 'zod'
import { EVALUATION_RESULT_STATUSES, EVALUATION_STATUSES, type EvaluationResultStatus, type EvaluationStatus } from '../../entities/index.ts'
import { envelope, iso, isoOrNull, jsonInt, name, paginated, pageQuery, timestamp } from '../access/wire.ts'
import { Scorer, ScoreResult, Scorers, ScorerSettings, type TScorer } from './scorer.schema.ts'

/** Most concurrent item runs of one evaluation, and the default. */
export const CONCURRENCY_MAX = 10
export const CONCURRENCY_DEFAULT = 4
/** Most items one evaluation runs: a larger dataset is refused at creation (docs/api/evaluations.md, "Creating one"). */
export const EVALUATION_ITEMS_MAX = 10_000

/** `POST /api/v1/evaluations` (plus the workspace context's `workspace_uuid`). */
export const CreateEvaluationInput = z.strictObject({
  workspace_uuid: z.uuid().optional(),
  name: name(),
  dataset_uuid: z.uuid(),
  agent_uuid: z.uuid(),
  /** The agent's version its items run at (docs/api/versions.md); default the version current at creation. */
  agent_version: jsonInt(1, 2_147_483_647).optional(),
  scorers: Scorers,
  concurrency: jsonInt(1, CONCURRENCY_MAX).default(CONCURRENCY_DEFAULT),
})
export type TCreateEvaluationInput = z.infer<typeof CreateEvaluationInput>

/** `GET /api/v1/evaluations`: the caller's (all of the workspace's for its owners and admins), newest first. */
export const ListEvaluationsInput = z.strictObject({
  workspace_uuid: z.uuid().optional(),
  ...pageQuery,
  agent_uuid: z.uuid().optional(),
  dataset_uuid: z.uuid().optional(),
  status: z.enum(EVALUATION_STATUSES).optional(),
})
export type TListEvaluationsInput = z.infer<typeof ListEvaluationsInput>

export const EvaluationPathInput = z.strictObject({ workspace_uuid: z.uuid().optional(), evaluation_uuid: z.uuid() })

/** `GET /api/v1/evaluations/{evaluation_uuid}/results`: items in dataset order. */
export const EvaluationResultsInput = z.strictObject({
  workspace_uuid: z.uuid().optional(),
  evaluation_uuid: z.uuid(),
  ...pageQuery,
  status: z.enum(EVALUATION_RESULT_STATUSES).optional(),
})
export type TEvaluationResultsInput = z.infer<typeof EvaluationResultsInput>

/** `GET /api/v1/evaluations/compare?base=&candidate=`. */
export const CompareEvaluationsInput = z.strictObject({ workspace_uuid: z.uuid().optional(), base: z.uuid(), candidate: z.uuid() })

/** A dataset or agent as an evaluation names it. */
const Summary = z.object({ uuid: z.uuid(), name: z.string() })

/** One scorer's figures over the scored items: null while none is scored. */
const ScorerSummary = z.object({
  scorer: ScorerSettings,
  mean_score: z.number().nullable(),
  /** Share of scored items it passed, 0..1. */
  pass_rate: z.number().nullable(),
})

export const Evaluation = z
  .object({
    uuid: z.uuid(),
    name: z.string(),
    status: z.enum(EVALUATION_STATUSES),
    dataset: Summary,
    agent: Summary,
    agent_version: z.number().int(),
    scorers: z.array(ScorerSettings),
    concurrency: z.number().int(),
    /** Items: all of them, those finished (failed ones included), those whose run failed. */
    progress: z.object({ total: z.number().int(), done: z.number().int(), failed: z.number().int() }),
    summary: z.array(ScorerSummary),
    /** The items' runs and the judges' model calls. */
    usage: z.object({ total_tokens: z.number().int(), cost: z.number() }),
    /** Over the items whose run succeeded; null while there is none. Milliseconds. */
    latency_ms: z.object({ p50: z.number().nullable(), p95: z.number().nullable() }),
    /** Why it failed (status `failed`), else null. */
    error: z.string().nullable(),
    created_at: timestamp(),
    started_at: timestamp().nullable(),
    finished_at: timestamp().nullable(),
  })
  .meta({ id: 'Evaluation' })
export type TEvaluation = z.infer<typeof Evaluation>
export const EvaluationEnvelope = envelope(Evaluation)
export const EvaluationList = paginated(Evaluation)

/** The dataset item an evaluation ran, as it was when the evaluation was created. */
const ResultItem = z.object({
  uuid: z.uuid(),
  input: z.string(),
  expected_output: z.string().nullable(),
  metadata: z.record(z.string(), z.unknown()).nullable(),
  created_at: timestamp(),
  updated_at: timestamp(),
})


export const EvaluationResult = z
  .object({
    item: ResultItem,
    status: z.enum(EVALUATION_RESULT_STATUSES),
    run_uuid: z.uuid().nullable(),
    output: z.string().nullable(),
    latency_ms: z.number().int().nullable(),
    cost: z.number().nullable(),
    /** In the order of the evaluation's scorers; empty until the item is scored. */
    scores: z.array(ScoreResult),
    /** Why the item's run failed, else null. */
    error: z.string().nullable(),
  })
  .meta({ id: 'EvaluationResult' })
export const EvaluationResultList = paginated(EvaluationResult)

export const EvaluationComparison = envelope(
  z.object({
    base: Evaluation,
    candidate: Evaluation,
    scorers: z.array(z.object({ scorer: ScorerSettings, base_mean: z.number().nullable(), candidate_mean: z.number().nullable(), difference: z.number().nullable() })),
    changed_items: z.array(z.object({ item: ResultItem, scorer: ScorerSettings, base_passed: z.boolean(), candidate_passed: z.boolean() })),
  }),
)
export type TEvaluationComparison = z.infer<typeof EvaluationComparison>

/** An evaluation row as {@link toEvaluation} reads it (aggregates computed in the same statement). */
export interface EvaluationRow {
  uuid: string
  name: string
  status: EvaluationStatus
  datasetUuid: string
  datasetName: string
  agentUuid: string
  agentName: string
  agentVersion: number
  scorers: unknown
  concurrency: number
  total: number
  done: number
  failed: number
  /** Per scorer, in order: `[mean_score, pass_rate]`, as JSON text or parsed. */
  summary: unknown
  totalTokens: number
  cost: number | string
  p50: number | null
  p95: number | null
  error: string | null
  createdAt: Date | string
  startedAt: Date | string | null
  finishedAt: Date | string | null
}

const parsed = (value: unknown): unknown => (typeof value === 'string' ? JSON.parse(value) : value)
const round = (value: number | null, places = 4): number | null => (value === null ? null : Math.round(value * 10 ** places) / 10 ** places)

/** The stored scorer list (as sent, validated at creation), as the engine grades with it. */
export const scorersOf = (value: unknown): TScorer[] => z.array(Scorer).parse(parsed(value))
/** The stored scorer list as the wire shows it (read without compiling its patterns and schemas again). */
const shownScorers = (value: unknown): z.infer<typeof ScorerSettings>[] => z.array(ScorerSettings).parse(parsed(value))

/** Maps an evaluation row to the wire. */
export function toEvaluation(row: EvaluationRow): TEvaluation {
  const scorers = shownScorers(row.scorers)
  const figures = z.array(z.tuple([z.number().nullable(), z.number().nullable()])).catch([]).parse(parsed(row.summary) ?? [])
  return {
    uuid: row.uuid,
    name: row.name,
    status: row.status,
    dataset: { uuid: row.datasetUuid, name: row.datasetName },
    agent: { uuid: row.agentUuid, name: row.agentName },
    agent_version: Number(row.agentVersion),
    scorers,
    concurrency: Number(row.concurrency),
    progress: { total: Number(row.total), done: Number(row.done), failed: Number(row.failed) },
    summary: scorers.map((scorer, index) => ({ scorer, mean_score: round(figures[index]?.[0] ?? null), pass_rate: round(figures[index]?.[1] ?? null) })),
    usage: { total_tokens: Number(row.totalTokens), cost: Number(row.cost) },
    latency_ms: { p50: round(row.p50 === null ? null : Number(row.p50), 1), p95: round(row.p95 === null ? null : Number(row.p95), 1) },
    error: row.error,
    created_at: iso(row.createdAt),
    started_at: isoOrNull(row.startedAt),
    finished_at: isoOrNull(row.finishedAt),
  }
}

/** A stored item score (`evaluation_results.scores` entry). */
export interface StoredScore {
  score: number
  passed: boolean
  reason: string
}

/** A result row as {@link toEvaluationResult} reads it. */
export interface EvaluationResultRow {
  item: unknown
  status: EvaluationResultStatus
  runUuid: string | null
  output: string | null
  latencyMs: number | null
  cost: number | string | null
  scores: unknown
  error: string | null
}

const StoredItem = ResultItem
const StoredScores = z.array(z.object({ score: z.number(), passed: z.boolean(), reason: z.string() }))

/** Maps a result row to the wire, pairing its scores with `scorers` by position. */
export function toEvaluationResult(row: EvaluationResultRow, scorers: readonly z.infer<typeof ScorerSettings>[]): z.infer<typeof EvaluationResult> {
  const scores = StoredScores.catch([]).parse(parsed(row.scores) ?? [])
  return {
    item: StoredItem.parse(parsed(row.item)),
    status: row.status,
    run_uuid: row.runUuid,
    output: row.output,
    latency_ms: row.latencyMs === null ? null : Number(row.latencyMs),
    cost: row.cost === null ? null : Number(row.cost),
    scores: scores.slice(0, scorers.length).flatMap((score, index) => {
      const scorer = scorers[index]
      return scorer ? [{ scorer, ...score }] : []
    }),
    error: row.error,
  }
}
