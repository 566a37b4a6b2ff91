/**
 * Running evaluations (docs/api/evaluations.md, "How an evaluation runs"). Each evaluation is one
 * job of the durable queue (`evaluation.run`, its id the evaluation's uuid, so it is queued once),
 * worked by a process that works the queue. The job acts as the evaluation's creator
 * (src/access/acting-context.ts) and keeps `concurrency` items under way: each item is claimed
 * (`pending` -> `running`) with the uuid its run will have, stored before the run is, then run as
 * an ordinary agent run at the evaluation's version, then scored (./scorers.ts).
 *
 * No item runs twice: a job whose process died is retried (its heartbeat stops), and the retry
 * takes the items left `running` first. An item's run is looked up by its stored uuid: one that
 * exists is waited for (the runs' own takeover carries an interrupted run on,
 * docs/api/runs.md), one that does not was never stored, so it is started under that uuid (the
 * runs' unique uuid makes a second start impossible). Every result write is conditional on the
 * item still being `running`, so a cancel is never overwritten.
 *
 * A run that fails gives its item score 0 from every scorer; the evaluation goes on. The
 * evaluation fails only when it cannot go on: its creator left the workspace, or the agent is
 * gone or no longer theirs to run.
 */
import { setTimeout as sleep } from 'node:timers/promises'
import { uuidv7 } from 'uuidv7'
import { actingContext } from '../access/acting-context.ts'
import type { ResourceCtx, ServiceDeps } from '../context.ts'
import type { Config } from '../platform/config.ts'
import type { Orm } from '../platform/db.ts'
import { retryOnConnectionLoss } from '../platform/db.ts'
import { AppError, ForbiddenError, NotFoundError } from '../platform/errors.ts'
import type { Logger } from '../platform/logger.ts'
import type { JobQueue } from '../platform/queue.ts'
import type { DueScheduler, DueSource } from '../platform/scheduler.ts'
import { runAgent } from '../runs/index.ts'
import { scorersOf } from './evaluation.schema.ts'
import type { TScorer } from './scorer.schema.ts'
import { scoreOutput, type Score } from './scorers.ts'

/** The job that runs one evaluation. */
export const EVALUATION_JOB = 'evaluation.run'
/** Milliseconds between two looks at a run this job did not start itself, and at a cancel. */
const POLL_MS = 250
/** Seconds a queued or running evaluation may go without progress before the sweep sends its job again. */
const STALE_SECONDS = 120

interface EvaluationJob {
  evaluation_uuid: string
}

/** An evaluation as its job reads it. */
interface Target {
  id: number
  uuid: string
  status: string
  userId: number | null
  workspaceId: number
  agentUuid: string
  agentVersion: number
  scorers: TScorer[]
  concurrency: number
}

/** An item as its job reads it. */
interface Item {
  id: number
  runUuid: string | null
  input: string
  expectedOutput: string | null
}

/** A run's end, as the item's result takes it. */
interface RunEnd {
  status: string
  output: string | null
  latencyMs: number | null
  cost: number | null
  totalTokens: number
  error: string | null
}

/** Why the evaluation stopped before its items ran out. */
class CannotGoOn extends Error {}

const RUN_END_SQL = `select status, output, latency_ms as "latencyMs", cost::float8 as cost, total_tokens as "totalTokens", error->>'message' as error
  from runs where uuid = ?`
const FINAL_RUN_STATUSES = new Set(['succeeded', 'failed', 'canceled'])

/** See the module comment. */
export class EvaluationEngine implements DueSource {
  readonly name = 'evaluations'
  #deps: ServiceDeps | undefined

  private constructor(private readonly o: { orm: Orm; config: Config; log: Logger; jobs: JobQueue }) {}

  /**
   * Registers {@link EVALUATION_JOB} (retried when its worker died or the database failed it; the
   * retry resumes, module comment) and the sweep that sends lost jobs again with `scheduler`.
   */
  static create(o: { orm: Orm; config: Config; log: Logger; jobs: JobQueue; scheduler: DueScheduler }): EvaluationEngine {
    const engine = new EvaluationEngine(o)
    o.jobs.register<EvaluationJob>(EVALUATION_JOB, (data) => engine.#run(data.evaluation_uuid), {
      retryLimit: 10,
      retryDelay: 2,
      retryBackoff: true,
      // A dataset of 10,000 items at concurrency 1 takes hours; the heartbeat, not this, finds a dead worker.
      expireInSeconds: 24 * 3600,
      heartbeatSeconds: 10,
      localConcurrency: 2,
    })
    o.scheduler.register(engine)
    return engine
  }

  /** The services the jobs act through (src/app.ts binds the runtime's). */
  bind(deps: ServiceDeps): void {
    this.#deps = deps
  }

  /** Queues the job of evaluation `uuid`; a job of it that exists already is kept (its id is the uuid). */
  async send(uuid: string): Promise<void> {
    await this.o.jobs.send<EvaluationJob>(EVALUATION_JOB, { evaluation_uuid: uuid }, { id: uuid })
  }

  /** {@link DueSource}: the sweep looks once a minute. */
  async earliestDue(): Promise<Date | null> {
    return new Date(Date.now() + 60_000)
  }

  /**
   * {@link DueSource}: sends again the jobs of evaluations left queued or running without progress
   * for {@link STALE_SECONDS} (a send lost after the evaluation was stored, a job whose retries
   * ran out); a job that still exists is kept, so this never doubles one.
   */
  async fireDue(): Promise<number> {
    const stale = await this.o.orm.em.fork().execute<{ uuid: string }[]>(
      `select uuid from evaluations where status in ('queued', 'running') and updated_at < now() - make_interval(secs => ${STALE_SECONDS}) limit 100`,
    )
    for (const { uuid } of stale) await this.o.jobs.ensure<EvaluationJob>(EVALUATION_JOB, { evaluation_uuid: uuid }, { id: uuid })
    return stale.length
  }

  async #run(uuid: string): Promise<void> {
    const deps = this.#deps
    if (!deps) throw new Error('The evaluation engine is not bound to the services')
    const target = await this.#target(uuid)
    if (!target || (target.status !== 'queued' && target.status !== 'running')) return
    await this.#start(target.id)
    let ctx: ResourceCtx
    try {
      ctx = await actingContext(deps, target.userId ?? 0, target.workspaceId)
    } catch (error) {
      if (error instanceof NotFoundError) return this.#end(target, 'failed', "The evaluation's creator is no longer a member of its workspace")
      throw error
    }
    const stop = new AbortController()
    const watching = this.#watchCancel(target.id, stop)
    try {
      await this.#runItems(ctx, target, stop)
    } catch (error) {
      if (!(error instanceof CannotGoOn)) throw error
      await this.#end(target, 'failed', error.message)
      return
    } finally {
      stop.abort()
      await watching
    }
    await this.#end(target, 'succeeded', null)
  }

  /** Works the items left `running` by an earlier attempt, then claims `pending` ones, `concurrency` at once. */
  async #runItems(ctx: ResourceCtx, target: Target, stop: AbortController): Promise<void> {
    const resumed = await this.o.orm.em.fork().execute<Item[]>(
      `select id::float8 as id, run_uuid as "runUuid", item->>'input' as input, item->>'expected_output' as "expectedOutput"
       from evaluation_results where evaluation_id = ? and status = 'running' order by position`,
      [target.id],
    )
    const next = async (): Promise<Item | undefined> => resumed.shift() ?? this.#claim(target.id)
    let failure: unknown
    const worker = async () => {
      for (let item = await next(); item && !stop.signal.aborted; item = await next()) {
        try {
          await this.#runItem(ctx, target, item, stop.signal)
        } catch (error) {
          failure ??= error
          stop.abort()
        }
      }
    }
    await Promise.all(Array.from({ length: target.concurrency }, worker))
    if (failure) throw failure
  }

  /**
   * Claims the next `pending` item (the uuid its run will have stored with it), or none. Not
   * retried on a lost connection: a claim that committed unseen stays `running`, and the job's
   * failure makes the retry that resumes it.
   */
  async #claim(evaluationId: number): Promise<Item | undefined> {
    const [item] = await this.o.orm.em.fork().execute<Item[]>(
      `update evaluation_results set status = 'running', run_uuid = ?, started_at = now()
       where id = (select id from evaluation_results where evaluation_id = ? and status = 'pending' order by position limit 1 for update skip locked)
       returning id::float8 as id, run_uuid as "runUuid", item->>'input' as input, item->>'expected_output' as "expectedOutput"`,
      [uuidv7(), evaluationId],
    )
    return item
  }

  /** Runs (or waits for) one item's run, scores it and stores its result. */
  async #runItem(ctx: ResourceCtx, target: Target, item: Item, signal: AbortSignal): Promise<void> {
    const runUuid = item.runUuid ?? uuidv7()
    let end = await this.#runEnd(runUuid)
    if (!end) {
      try {
        await runAgent(
          ctx,
          { agent_uuid: target.agentUuid, input: item.input, version: target.agentVersion },
          { untilEnd: true, runUuid, evaluationUuid: target.uuid, signal },
        )
      } catch (error) {
        end = await this.#runEnd(runUuid)
        // Nothing stored: refused before the run (the agent gone, a budget spent, a model without a key).
        if (!end) {
          if (error instanceof NotFoundError || error instanceof ForbiddenError) {
            throw new CannotGoOn(`The agent can no longer be run by the evaluation's creator (${error.message})`)
          }
          if (!(error instanceof AppError)) throw error
          return this.#store(item.id, 'failed', { status: 'failed', output: null, latencyMs: null, cost: null, totalTokens: 0, error: error.message }, target.scorers)
        }
      }
    }
    end = await this.#waitForEnd(runUuid, signal)
    if (!end) return
    if (end.status === 'succeeded') {
      const graded = await scoreOutput(ctx, target.scorers, {
        input: item.input,
        expected_output: item.expectedOutput,
        output: end.output ?? '',
        latency_ms: end.latencyMs,
        cost: end.cost,
      })
      return this.#store(item.id, 'succeeded', end, target.scorers, graded.scores, graded.usage)
    }
    // Canceled with the evaluation (or on its own, through its run): nothing to grade.
    if (end.status === 'canceled') return this.#store(item.id, 'canceled', end, target.scorers)
    return this.#store(item.id, 'failed', end, target.scorers)
  }

  /** The run's end once it has ended (read again every {@link POLL_MS}), or none when `signal` aborts first. */
  async #waitForEnd(runUuid: string, signal: AbortSignal): Promise<RunEnd | undefined> {
    for (;;) {
      const end = await this.#runEnd(runUuid)
      if (end && FINAL_RUN_STATUSES.has(end.status)) return end
      if (signal.aborted && !end) return undefined
      await sleep(POLL_MS)
    }
  }

  async #runEnd(runUuid: string): Promise<RunEnd | undefined> {
    const [row] = await retryOnConnectionLoss(() => this.o.orm.em.fork().execute<RunEnd[]>(RUN_END_SQL, [runUuid]))
    return row
  }

  /**
   * Stores an item's result unless it is no longer `running` (canceled meanwhile). A failed item
   * scores 0 on every scorer, with the run's error as the reason.
   */
  async #store(id: number, status: 'succeeded' | 'failed' | 'canceled', end: RunEnd, scorers: readonly TScorer[], graded?: Score[], usage = { total_tokens: 0, cost: 0 }): Promise<void> {
    const reason = `The run ${end.status === 'canceled' ? 'was canceled' : 'failed'}${end.error ? `: ${end.error}` : ''}`
    const scores = status === 'succeeded' ? graded : status === 'failed' ? scorers.map(() => ({ score: 0, passed: false, reason })) : null
    // The evaluation's `updated_at` (what the sweep reads as progress) moves in the same statement.
    await retryOnConnectionLoss(() =>
      this.o.orm.em.fork().execute(
        `with stored as (
           update evaluation_results set status = ?, output = ?, latency_ms = ?, cost = ?, total_tokens = ?, judge_tokens = ?, judge_cost = ?,
             scores = ?::jsonb, error = ?, finished_at = now()
           where id = ? and status = 'running' returning evaluation_id)
         update evaluations set updated_at = now() where id in (select evaluation_id from stored) and status in ('queued', 'running')`,
        [status, end.output, end.latencyMs, end.cost, end.totalTokens, usage.total_tokens, usage.cost, scores ? JSON.stringify(scores) : null, status === 'failed' ? (end.error ?? reason) : null, id],
      ),
    )
  }

  /** Aborts `stop` once the evaluation is no longer running (canceled); resolves when `stop` aborts. */
  async #watchCancel(id: number, stop: AbortController): Promise<void> {
    while (!stop.signal.aborted) {
      await sleep(POLL_MS * 4, undefined, { signal: stop.signal }).catch(() => undefined)
      if (stop.signal.aborted) return
      const [row] = await this.o.orm.em.fork().execute<{ status: string }[]>('select status from evaluations where id = ?', [id]).catch(() => [])
      if (row && row.status !== 'running') stop.abort()
    }
  }

  /** Marks evaluation `id` started (and its progress, `updated_at`, which the sweep reads) unless it has ended. */
  async #start(id: number): Promise<void> {
    await retryOnConnectionLoss(() =>
      this.o.orm.em.fork().execute(
        `update evaluations set status = 'running', started_at = coalesce(started_at, now()), updated_at = now() where id = ? and status in ('queued', 'running')`,
        [id],
      ),
    )
  }

  /** Ends the evaluation (unless canceled meanwhile) with what is left of its items `canceled`; the trigger records its event. */
  async #end(target: Target, status: 'succeeded' | 'failed', error: string | null): Promise<void> {
    await retryOnConnectionLoss(() =>
      this.o.orm.em.fork().transactional(async (em) => {
        const ended = await em.execute(
          `update evaluations set status = ?, error = ?, finished_at = now(), updated_at = now() where id = ? and status in ('queued', 'running') returning id`,
          [status, error, target.id],
        )
        if (ended.length > 0) {
          await em.execute(`update evaluation_results set status = 'canceled', finished_at = now() where evaluation_id = ? and status in ('pending', 'running')`, [target.id])
        }
      }),
    )
  }

  async #target(uuid: string): Promise<Target | undefined> {
    const [row] = await this.o.orm.em.fork().execute<(Omit<Target, 'scorers'> & { scorers: unknown })[]>(
      `select e.id::float8 as id, e.uuid, e.status, e.user_id::float8 as "userId", e.workspace_id::float8 as "workspaceId",
         a.uuid as "agentUuid", e.agent_version as "agentVersion", e.scorers, e.concurrency
       from evaluations e join agents a on a.id = e.agent_id where e.uuid = ?`,
      [uuid],
    )
    return row ? { ...row, scorers: scorersOf(row.scorers) } : undefined
  }
}
