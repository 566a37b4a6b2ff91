/**
 * Evaluations (docs/api/evaluations.md, "Evaluations"): create (202, run by ./engine.ts through the
 * job queue), list, retrieve, cancel, the results per item, and the comparison of two evaluations
 * of one dataset. An evaluation is its creator's: they and the workspace's owners and admins read
 * and cancel it; anyone else gets 404.
 */
import { uuidv7 } from 'uuidv7'
import { requireResource, serviceScopeSql, viewerOf } from '../access/resource-access.ts'
import { managesWorkspace } from '../access/visibility.ts'
import { Conditions } from '../access/list-filters.ts'
import { page } from '../access/wire.ts'
import type { ResourceCtx } from '../context.ts'
import { retryOnConnectionLoss } from '../platform/db.ts'
import { ConflictError, ForbiddenError, NotFoundError, ValidationError } from '../platform/errors.ts'
import type { SqlFragment } from '../platform/sql.ts'
import { cancelEvaluationRuns, requireAgent } from '../runs/index.ts'
import {
  EVALUATION_ITEMS_MAX,
  toEvaluation,
  toEvaluationResult,
  type EvaluationResultRow,
  type EvaluationRow,
  type TCreateEvaluationInput,
  type TEvaluation,
  type TEvaluationComparison,
  type TEvaluationResultsInput,
  type TListEvaluationsInput,
} from './evaluation.schema.ts'
import type {} from './evaluations.port.ts'
import { checkScorers } from './scorers.ts'

/** An item's copy as evaluation_results keeps it: timestamps as the wire writes them. */
const ITEM_JSON = `jsonb_build_object('uuid', i.uuid, 'input', i.input, 'expected_output', i.expected_output, 'metadata', i.metadata,
  'created_at', to_char(i.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
  'updated_at', to_char(i.updated_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'))`

/**
 * The Evaluation's columns, its progress, usage and latency percentiles in one pass over its
 * results, and each scorer's mean and pass rate (by position in `scores`) over the scored items.
 */
const EVALUATION_SELECT = `select e.id::float8 as id, e.uuid, e.name, e.status, d.uuid as "datasetUuid", d.name as "datasetName",
  a.uuid as "agentUuid", a.name as "agentName", e.agent_version as "agentVersion", e.scorers, e.concurrency, e.error,
  e.created_at as "createdAt", e.started_at as "startedAt", e.finished_at as "finishedAt",
  agg.total, agg.done, agg.failed, agg.total_tokens as "totalTokens", agg.cost, agg.p50, agg.p95,
  (select coalesce(jsonb_agg(jsonb_build_array(s.mean, s.rate) order by s.idx), '[]'::jsonb) from (
     select sc.idx, avg((sc.v->>'score')::float8) as mean, avg(case when (sc.v->>'passed')::boolean then 1 else 0 end)::float8 as rate
     from evaluation_results sr cross join lateral jsonb_array_elements(sr.scores) with ordinality as sc(v, idx)
     where sr.evaluation_id = e.id and sr.scores is not null group by sc.idx) s) as summary
  from evaluations e join datasets d on d.id = e.dataset_id join agents a on a.id = e.agent_id
  cross join lateral (select count(*)::int as total,
      (count(*) filter (where r.status in ('succeeded', 'failed')))::int as done,
      (count(*) filter (where r.status = 'failed'))::int as failed,
      coalesce(sum(r.total_tokens + r.judge_tokens), 0)::float8 as total_tokens,
      coalesce(sum(coalesce(r.cost, 0) + r.judge_cost), 0)::float8 as cost,
      (percentile_cont(0.5) within group (order by r.latency_ms) filter (where r.status = 'succeeded'))::float8 as p50,
      (percentile_cont(0.95) within group (order by r.latency_ms) filter (where r.status = 'succeeded'))::float8 as p95
    from evaluation_results r where r.evaluation_id = e.id) agg`

/**
 * The evaluations the caller may read (module comment), over the alias `e`: of the request's
 * workspace (in the caller's service scope), started by the caller unless they manage it.
 */
function evaluationScopeSql(ctx: ResourceCtx): SqlFragment {
  const viewer = viewerOf(ctx)
  const scope = serviceScopeSql('e', ctx)
  return {
    sql: `(e.workspace_id = ? and ${scope.sql}${managesWorkspace(viewer) ? '' : ' and e.user_id = ?'})`,
    params: [viewer.workspaceId, ...scope.params, ...(managesWorkspace(viewer) ? [] : [viewer.userId])],
  }
}

/** Evaluations read with their figures; `where` over `e`, `tail` after it. */
async function select(ctx: ResourceCtx, where: SqlFragment, tail = ''): Promise<(TEvaluation & { id: number })[]> {
  const rows = await ctx.em.execute<(EvaluationRow & { id: number })[]>(`${EVALUATION_SELECT} where ${where.sql} ${tail}`, where.params)
  return rows.map((row) => ({ id: Number(row.id), ...toEvaluation(row) }))
}

/**
 * The evaluation `uuid` the caller may read, with its figures.
 * @throws NotFoundError when there is none (or it is someone else's the caller does not manage).
 */
async function requireEvaluation(ctx: ResourceCtx, uuid: string): Promise<TEvaluation & { id: number }> {
  const scope = evaluationScopeSql(ctx)
  const [found] = await select(ctx, { sql: `e.uuid = ? and ${scope.sql}`, params: [uuid, ...scope.params] })
  if (!found) throw new NotFoundError('Evaluation')
  return found
}

const withoutId = ({ id: _id, ...evaluation }: TEvaluation & { id: number }): TEvaluation => evaluation

/**
 * `POST /api/v1/evaluations` (docs/api/evaluations.md): checks the dataset (read access, 1 to
 * {@link EVALUATION_ITEMS_MAX} items), the agent (the right to run it, at `agent_version` or the
 * current version) and the scorers' judge models, stores the evaluation with a copy of every item,
 * then queues its job.
 * @throws ValidationError naming `dataset_uuid`, `agent_uuid`, `agent_version` or a scorer's field.
 */
export async function create(ctx: ResourceCtx, input: TCreateEvaluationInput): Promise<{ data: TEvaluation }> {
  const dataset = await requireResource(ctx, 'datasets', 'Dataset', input.dataset_uuid, 'read').catch((error: unknown) => {
    if (error instanceof NotFoundError) throw new ValidationError(['dataset_uuid'], 'No such dataset is visible to you')
    throw error
  })
  const agent = await requireAgent(ctx, input.agent_uuid, input.agent_version ?? null).catch((error: unknown) => {
    if (error instanceof NotFoundError || error instanceof ForbiddenError) throw new ValidationError(['agent_uuid'], 'No such agent is visible to you')
    if (error instanceof ValidationError && error.issues[0]?.path[0] === 'version') throw new ValidationError(['agent_version'], error.message)
    throw error
  })
  await checkScorers(ctx, input.scorers)
  const [{ count }] = await ctx.em.execute<{ count: number }[]>('select count(*)::int as count from dataset_items where dataset_id = ?', [dataset.id])
  if (Number(count) === 0) throw new ValidationError(['dataset_uuid'], 'The dataset has no items')
  if (Number(count) > EVALUATION_ITEMS_MAX) {
    throw new ValidationError(['dataset_uuid'], `The dataset has ${count} items; an evaluation runs at most ${EVALUATION_ITEMS_MAX}`)
  }
  const uuid = uuidv7()
  await ctx.em.transactional(async (em) => {
    const [row] = await em.execute<{ id: number }[]>(
      `insert into evaluations (uuid, name, status, dataset_id, agent_id, agent_version, scorers, concurrency, user_id, workspace_id, created_at, updated_at)
       values (?, ?, 'queued', ?, ?, ?, ?::jsonb, ?, ?, ?, now(), now()) returning id::float8 as id`,
      [uuid, input.name, dataset.id, agent.id, agent.version, JSON.stringify(input.scorers), input.concurrency, ctx.auth.user.id, ctx.workspace.workspace.id],
    )
    await em.execute(
      `insert into evaluation_results (evaluation_id, position, item, status)
       select ?, row_number() over (order by i.id), ${ITEM_JSON}, 'pending' from dataset_items i where i.dataset_id = ?`,
      [row.id, dataset.id],
    )
  })
  // Stored first, then queued: a lost send is sent again by the engine's sweep (./engine.ts).
  await retryOnConnectionLoss(() => ctx.deps.evaluations.send(uuid))
  return { data: withoutId(await requireEvaluation(ctx, uuid)) }
}

/** `GET /api/v1/evaluations`, newest first, filtered by `agent_uuid`, `dataset_uuid` and `status`. */
export async function list(ctx: ResourceCtx, input: TListEvaluationsInput) {
  const where = new Conditions(evaluationScopeSql(ctx))
  if (input.agent_uuid) where.add('a.uuid = ?', input.agent_uuid)
  if (input.dataset_uuid) where.add('d.uuid = ?', input.dataset_uuid)
  if (input.status) where.add('e.status = ?', input.status)
  const filter = where.toSql()
  const [items, [counted]] = await Promise.all([
    select(ctx, filter, `order by e.id desc limit ${input.per_page} offset ${(input.page - 1) * input.per_page}`),
    ctx.em.execute<{ total: number }[]>(
      `select count(*)::int as total from evaluations e join datasets d on d.id = e.dataset_id join agents a on a.id = e.agent_id where ${filter.sql}`,
      filter.params,
    ),
  ])
  return page(items.map(withoutId), {
    total: Number(counted.total),
    page: input.page,
    perPage: input.per_page,
    path: `${ctx.config.appUrl}/api/v1/evaluations`,
    query: { agent_uuid: input.agent_uuid, dataset_uuid: input.dataset_uuid, status: input.status },
  })
}

/** `GET /api/v1/evaluations/{evaluation_uuid}`. @throws NotFoundError. */
export async function retrieve(ctx: ResourceCtx, uuid: string): Promise<{ data: TEvaluation }> {
  return { data: withoutId(await requireEvaluation(ctx, uuid)) }
}

/**
 * `POST /api/v1/evaluations/{evaluation_uuid}/cancel`: ends it `canceled`, its waiting items
 * `canceled`, and cancels the runs of the items under way (their items end `canceled` too).
 * @throws NotFoundError; ConflictError once it has ended.
 */
export async function cancel(ctx: ResourceCtx, uuid: string): Promise<{ data: TEvaluation }> {
  const found = await requireEvaluation(ctx, uuid)
  const canceled = await ctx.em.transactional(async (em) => {
    const rows = await em.execute(
      `update evaluations set status = 'canceled', finished_at = now(), updated_at = now() where id = ? and status in ('queued', 'running') returning id`,
      [found.id],
    )
    if (rows.length === 0) return false
    await em.execute(`update evaluation_results set status = 'canceled', finished_at = now() where evaluation_id = ? and status = 'pending'`, [found.id])
    return true
  })
  if (!canceled) throw new ConflictError(`The evaluation has already ended (${found.status})`)
  await cancelEvaluationRuns(ctx, uuid)
  return retrieve(ctx, uuid)
}

/** `GET /api/v1/evaluations/{evaluation_uuid}/results`: its items in dataset order, paginated. @throws NotFoundError. */
export async function results(ctx: ResourceCtx, input: TEvaluationResultsInput) {
  const evaluation = await requireEvaluation(ctx, input.evaluation_uuid)
  const where = new Conditions({ sql: 'r.evaluation_id = ?', params: [evaluation.id] })
  if (input.status) where.add('r.status = ?', input.status)
  const filter = where.toSql()
  const [rows, [counted]] = await Promise.all([
    ctx.em.execute<EvaluationResultRow[]>(
      `select r.item, r.status, r.run_uuid as "runUuid", r.output, r.latency_ms as "latencyMs", r.cost, r.scores, r.error
       from evaluation_results r where ${filter.sql} order by r.position limit ${input.per_page} offset ${(input.page - 1) * input.per_page}`,
      filter.params,
    ),
    ctx.em.execute<{ total: number }[]>(`select count(*)::int as total from evaluation_results r where ${filter.sql}`, filter.params),
  ])
  return page(
    rows.map((row) => toEvaluationResult(row, evaluation.scorers)),
    {
      total: Number(counted.total),
      page: input.page,
      perPage: input.per_page,
      path: `${ctx.config.appUrl}/api/v1/evaluations/${input.evaluation_uuid}/results`,
      query: { status: input.status },
    },
  )
}

/** A scorer's identity for matching across evaluations: its JSON with keys sorted. */
function scorerKey(scorer: unknown): string {
  return JSON.stringify(scorer, (_key, value: unknown) =>
    value && typeof value === 'object' && !Array.isArray(value)
      ? Object.fromEntries(Object.entries(value).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : value,
  )
}

/**
 * `GET /api/v1/evaluations/compare?base=&candidate=`: the scorers both used (matched by their
 * settings), each with both means and `candidate - base`, and the items (matched by the dataset
 * item's uuid) whose verdict changed on one of them.
 * @throws NotFoundError for either evaluation; ValidationError naming `candidate` when the two are of different datasets.
 */
export async function compare(ctx: ResourceCtx, input: { base: string; candidate: string }): Promise<TEvaluationComparison> {
  const [base, candidate] = await Promise.all([requireEvaluation(ctx, input.base), requireEvaluation(ctx, input.candidate)])
  if (base.dataset.uuid !== candidate.dataset.uuid) {
    throw new ValidationError(['candidate'], 'The two evaluations are of different datasets; compare evaluations of one dataset')
  }
  const pairs = base.scorers.flatMap((scorer, b) => {
    const c = candidate.scorers.findIndex((other) => scorerKey(other) === scorerKey(scorer))
    return c === -1 ? [] : [{ scorer, b, c }]
  })
  const rounded = (value: number) => Math.round(value * 10_000) / 10_000
  const scorers = pairs.map(({ scorer, b, c }) => {
    const baseMean = base.summary[b]?.mean_score ?? null
    const candidateMean = candidate.summary[c]?.mean_score ?? null
    return { scorer, base_mean: baseMean, candidate_mean: candidateMean, difference: baseMean === null || candidateMean === null ? null : rounded(candidateMean - baseMean) }
  })
  const rows = await ctx.em.execute<{ baseScores: unknown; candidateScores: unknown; item: unknown }[]>(
    `select b.scores as "baseScores", c.scores as "candidateScores", c.item
     from evaluation_results b join evaluation_results c on c.evaluation_id = ? and c.item->>'uuid' = b.item->>'uuid'
     where b.evaluation_id = ? and b.scores is not null and c.scores is not null order by c.position`,
    [candidate.id, base.id],
  )
  const changed = rows.flatMap((row) => {
    const baseResult = toEvaluationResult({ ...EMPTY_RESULT, item: row.item, scores: row.baseScores }, base.scorers)
    const candidateResult = toEvaluationResult({ ...EMPTY_RESULT, item: row.item, scores: row.candidateScores }, candidate.scorers)
    return pairs.flatMap(({ scorer, b, c }) => {
      const before = baseResult.scores[b]?.passed
      const after = candidateResult.scores[c]?.passed
      return before === undefined || after === undefined || before === after ? [] : [{ item: candidateResult.item, scorer, base_passed: before, candidate_passed: after }]
    })
  })
  return { data: { base: withoutId(base), candidate: withoutId(candidate), scorers, changed_items: changed } }
}

/** The fields of a result row a comparison does not read. */
const EMPTY_RESULT: Omit<EvaluationResultRow, 'item' | 'scores'> = { status: 'succeeded', runUuid: null, output: null, latencyMs: null, cost: null, error: null }
