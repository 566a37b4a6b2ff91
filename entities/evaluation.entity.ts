import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { Agent } from './agent.entity.ts'
import { resourceKeys, timestamps } from './columns.ts'
import { recordOwnership } from './ownership.ts'

/** An evaluation's state (docs/api/evaluations.md, "Evaluations"). */
export const EVALUATION_STATUSES = ['queued', 'running', 'succeeded', 'failed', 'canceled'] as const
export type EvaluationStatus = (typeof EVALUATION_STATUSES)[number]

/** One item's state within an evaluation: waiting, its run under way, ended, or never run (canceled). */
export const EVALUATION_RESULT_STATUSES = ['pending', 'running', 'succeeded', 'failed', 'canceled'] as const
export type EvaluationResultStatus = (typeof EVALUATION_RESULT_STATUSES)[number]

/**
 * An evaluation of a dataset against an agent at one version (`evaluations`,
 * docs/api/evaluations.md). `scorers` is the list as sent; `dataset_id` names the dataset (kept
 * when the dataset is deleted later: the results hold copies of the items). Its creator and the
 * workspace's owners and admins read and cancel it.
 */
export const Evaluation = defineEntity({
  name: 'Evaluation',
  tableName: 'evaluations',
  indexes: [{ properties: ['workspace', 'createdAt'] }],
  properties: {
    ...resourceKeys(),
    name: p.string().length(255),
    status: p.enum(EVALUATION_STATUSES).default('queued'),
    datasetId: p.bigint('number').fieldName('dataset_id'),
    agent: () => p.manyToOne(Agent).fieldName('agent_id').deleteRule('cascade'),
    agentVersion: p.integer().fieldName('agent_version'),
    scorers: p.json<unknown[]>(),
    concurrency: p.integer().default(4),
    error: p.text().nullable(),
    ...recordOwnership(),
    startedAt: p.datetime().nullable().fieldName('started_at'),
    finishedAt: p.datetime().nullable().fieldName('finished_at'),
    ...timestamps(),
  },
})

export type IEvaluation = InferEntity<typeof Evaluation>

/**
 * One item of an evaluation (`evaluation_results`): a copy of the dataset item as it was when the
 * evaluation started (`item`), its place in the dataset (`position`), the run it became
 * (`run_uuid`, chosen and stored before the run is, so a resumed evaluation finds the run rather
 * than starting another), what the run answered and cost, the judges' usage, and the scores in
 * the order of the evaluation's scorers.
 */
export const EvaluationResult = defineEntity({
  name: 'EvaluationResult',
  tableName: 'evaluation_results',
  indexes: [{ properties: ['evaluation', 'status'] }],
  uniques: [{ properties: ['evaluation', 'position'] }],
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    evaluation: () => p.manyToOne(Evaluation).fieldName('evaluation_id').deleteRule('cascade'),
    position: p.integer(),
    item: p.json<Record<string, unknown>>(),
    status: p.enum(EVALUATION_RESULT_STATUSES).default('pending'),
    runUuid: p.uuid().nullable().fieldName('run_uuid'),
    output: p.text().nullable(),
    latencyMs: p.integer().nullable().fieldName('latency_ms'),
    cost: p.decimal('number').precision(14).scale(6).nullable(),
    totalTokens: p.integer().fieldName('total_tokens').default(0),
    judgeTokens: p.integer().fieldName('judge_tokens').default(0),
    judgeCost: p.decimal('number').precision(14).scale(6).fieldName('judge_cost').default(0),
    scores: p.json<unknown[]>().nullable(),
    error: p.text().nullable(),
    startedAt: p.datetime().nullable().fieldName('started_at'),
    finishedAt: p.datetime().nullable().fieldName('finished_at'),
  },
})

export type IEvaluationResult = InferEntity<typeof EvaluationResult>
