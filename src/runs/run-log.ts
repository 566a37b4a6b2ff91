/**
 * The append-only event log of a run (`run_events`, docs/api/runs.md):
 * writing it while a run executes, reading it back, and following it live.
 *
 * Writing: the executing process is the only writer of a run's log, so it numbers events itself
 * (`seq` from 1, no gaps). Events queue in memory; one write at a time stores everything queued
 * in one statement (which also moves `runs.events_count` and `runs.updated_at`), then publishes
 * them on the {@link RunBus}. While a write is under
 * way new events wait for the next, so a fast stream costs a few statements, not one per delta,
 * and the first event goes out after a single insert.
 *
 * A write whose connection was lost runs again on a new one (src/platform/db.ts,
 * `retryOnConnectionLoss`: the statement inserts each event once, whatever ran before), and a
 * batch that still could not be stored goes back to the head of the queue, so the log never has a
 * gap. Every write is conditional on the writer's claim (`runs.attempts`): once another process
 * took the run over (src/runs/run-manager.ts), this one's writes store nothing and the log fails
 * with {@link RunLostError}.
 */
import { executePrepared, retryOnConnectionLoss, type Em, type Orm } from '../platform/db.ts'
import { jsonValueOf, storableJson } from '../access/wire.ts'
import type { RunEventRecord } from './run.schema.ts'
import type { RunBus } from './run-bus.ts'

/** Event types, in the order a run emits them. */
export const RUN_EVENT_TYPES = [
  'run.started',
  'run.warning',
  'knowledge.retrieved',
  'text.delta',
  'tool.call',
  'tool.result',
  'message',
  'error',
  'run.approval_requested',
  'run.resumed',
  'run.succeeded',
  'run.failed',
  'run.canceled',
] as const
export type RunEventType = (typeof RUN_EVENT_TYPES)[number]

/** Types after which a run's log never grows again. */
export const FINAL_EVENT_TYPES: ReadonlySet<string> = new Set(['run.succeeded', 'run.failed', 'run.canceled'])

/** Most events one read of the log returns. */
const READ_BATCH = 500

/**
 * A run's writer no longer holds it: another process took it over after this one's heartbeats
 * stopped landing (src/runs/run-manager.ts). Nothing more of this execution is stored.
 */
export class RunLostError extends Error {
  override name = 'RunLostError'
}

/** The run a log writes: its id and the claim (`runs.attempts`) its executor runs under. */
export interface LoggedRun {
  id: number
  attempts: number
}

/** The writer of one executing run's log; see the module comment. */
export class RunLog {
  readonly #orm: Orm
  readonly #bus: RunBus
  /** The run once its launch statement stored it; null when that failed (then nothing is written). */
  readonly #stored: Promise<LoggedRun | null>
  #runId: number | null = null
  #seq = 0
  /** The last event stored. */
  #storedSeq = 0
  #queue: RunEventRecord[] = []
  /** A checkpoint (JSON) to store with the next write. */
  #checkpoint: string | null = null
  #writing: Promise<void> | null = null
  #failure: unknown = null
  /** Callers of {@link stored} waiting for an event to be stored. */
  #waiters: { seq: number; resolve: () => void; reject: (error: unknown) => void }[] = []

  /**
   * @param run the run once its launch statement has stored it: events queue until then, and are
   *   dropped when it settles null (the run was never stored).
   * @param storedSeq events of the run already stored (`run.started`, written with the run): numbering goes on after it.
   */
  constructor(orm: Orm, bus: RunBus, run: Promise<LoggedRun | null>, storedSeq = 0) {
    this.#orm = orm
    this.#bus = bus
    this.#stored = run.then((value) => {
      this.#runId = value?.id ?? null
      return value
    })
    this.#seq = storedSeq
    this.#storedSeq = storedSeq
  }

  /** The number of the last event handed to the log. */
  get seq(): number {
    return this.#seq
  }

  /** Queues an event; it is stored and published shortly after, in order. Answers its number. */
  append(type: RunEventType, data: unknown): number {
    this.#seq += 1
    this.#queue.push({ seq: this.#seq, type, data, created_at: new Date().toISOString() })
    this.#writing ??= this.#writeLoop()
    return this.#seq
  }

  /**
   * Stores `checkpoint` (`runs.checkpoint`, any JSON value) with the next write, after every event
   * appended so far: what a process that takes the run over starts from (src/runs/run-driver.ts).
   */
  checkpoint(checkpoint: unknown): void {
    this.#checkpoint = storableJson(checkpoint)
    this.#writing ??= this.#writeLoop()
  }

  /**
   * Resolves once event `seq` is stored (a tool call is logged before the tool runs, so a process
   * that takes the run over knows it may have run).
   * @throws the write's error when the log cannot store it.
   */
  stored(seq: number): Promise<void> {
    if (seq <= this.#storedSeq) return Promise.resolve()
    if (this.#failure && !this.#writing) return Promise.reject(this.#failure)
    return new Promise((resolve, reject) => this.#waiters.push({ seq, resolve, reject }))
  }

  /**
   * Numbers events that the caller stores itself, in its own statement (the final events, stored
   * with the run's final status by src/runs/run-executor.ts). Call after {@link takeQueued} (or
   * {@link drain}), so that no earlier event is still being written; then {@link publish} them
   * once stored, or {@link release} them.
   */
  reserve(events: { type: RunEventType; data: unknown }[]): RunEventRecord[] {
    const createdAt = new Date().toISOString()
    return events.map(({ type, data }) => {
      this.#seq += 1
      return { seq: this.#seq, type, data, created_at: createdAt }
    })
  }

  /** Gives back reserved numbers that were not stored (they were the last ones handed out). */
  release(events: RunEventRecord[]): void {
    this.#seq -= events.length
  }

  /** Delivers reserved events once the caller has stored them. */
  publish(events: RunEventRecord[]): void {
    if (this.#runId !== null) this.#bus.publish(this.#runId, events)
  }

  /**
   * Hands over every event still queued, once the write under way (if any) has landed, so that
   * the caller stores them in its own statement after every earlier event (the settle statement
   * of src/runs/run-executor.ts, which saves a round trip at the end of each run). The caller
   * then {@link publish}es them once stored, or gives them back with {@link requeue}.
   * @throws the database error of a failed write; the events stay queued, so no number is lost.
   */
  async takeQueued(): Promise<RunEventRecord[]> {
    const queued = this.#queue
    this.#queue = []
    while (this.#writing) await this.#writing
    if (this.#failure) {
      this.requeue(queued)
      throw this.#failure
    }
    return queued
  }

  /** Queues events handed over by {@link takeQueued} again, ahead of any queued since. */
  requeue(events: RunEventRecord[]): void {
    if (events.length === 0) return
    this.#queue = [...events, ...this.#queue]
    this.#writing ??= this.#writeLoop()
  }

  /**
   * Waits until every queued event is stored and published.
   * @throws the database error of a failed write (the log is then incomplete).
   */
  async drain(): Promise<void> {
    while (this.#writing) await this.#writing
    if (this.#failure) throw this.#failure
  }

  async #writeLoop(): Promise<void> {
    try {
      const run = await this.#stored
      if (run === null) this.#queue = []
      while (run !== null && (this.#queue.length > 0 || this.#checkpoint !== null)) {
        if (this.#failure instanceof RunLostError) throw this.#failure
        const batch = this.#queue
        const checkpoint = this.#checkpoint
        this.#queue = []
        this.#checkpoint = null
        let held: boolean
        try {
          held = await retryOnConnectionLoss(() => insertEvents(this.#orm, run, batch, checkpoint, this.#storedSeq))
        } catch (error) {
          // Back at the head of the queue: a later write (the settle statement) stores them, in order.
          this.#queue = [...batch, ...this.#queue]
          this.#checkpoint ??= checkpoint
          throw error
        }
        if (!held) throw new RunLostError('Another process took the run over')
        this.#failure = null
        if (batch.length > 0) this.#storedSeq = batch[batch.length - 1].seq
        this.#wake()
        this.#bus.publish(run.id, batch)
      }
    } catch (error) {
      this.#failure = error instanceof RunLostError || !(this.#failure instanceof RunLostError) ? error : this.#failure
      for (const waiter of this.#waiters.splice(0)) waiter.reject(error)
    } finally {
      this.#writing = null
    }
  }

  /** Resolves the {@link stored} callers whose event is stored now. */
  #wake(): void {
    if (this.#waiters.length === 0) return
    const waiting = this.#waiters
    this.#waiters = []
    for (const waiter of waiting) {
      if (waiter.seq <= this.#storedSeq) waiter.resolve()
      else this.#waiters.push(waiter)
    }
  }
}

/**
 * `batch` as the JSON array the statements that store events open with `jsonb_to_recordset`
 * (`[{seq, type, data, created_at}]`, data made storable): one parameter whatever the number of
 * events, so each statement has one text and runs prepared.
 */
export function eventsJson(batch: RunEventRecord[]): string {
  let json = '['
  for (const [index, event] of batch.entries()) {
    json += `${index ? ',' : ''}{"seq":${event.seq},"type":${JSON.stringify(event.type)},"data":${storableJson(event.data)},"created_at":${JSON.stringify(event.created_at)}}`
  }
  return `${json}]`
}

/**
 * The statement of {@link insertEvents}. The events go in only through `counted`, the update of
 * the run under the writer's claim: a run taken over meanwhile (its `attempts` moved on) stores
 * nothing, and the row lock of that update orders this write after a takeover's. An event stored
 * already (a write run again after its commit's answer was lost) is skipped.
 */
const INSERT_EVENTS_SQL = `with counted as (
     update runs set events_count = greatest(events_count, ?), checkpoint = coalesce(?::jsonb, checkpoint), updated_at = now()
     where id = ? and attempts = ? returning id),
   stored as (
     insert into run_events (run_id, seq, type, data, created_at)
     select counted.id, e.seq, e.type, e.data, e.created_at
     from counted cross join jsonb_to_recordset(?::jsonb) as e(seq int, type text, data jsonb, created_at timestamptz)
     on conflict (run_id, seq) do nothing)
   select exists (select 1 from counted) as held, set_config('synchronous_commit', 'off', true)`

/**
 * Stores a batch of a run's events (with `checkpoint`, JSON, when given) and moves the run's
 * `events_count` and `updated_at`, in one statement (one round trip), prepared ({@link eventsJson});
 * answers false when the run is no longer held under `run.attempts` (nothing was stored). Its
 * commit does not wait for the WAL to reach the disk: `set_config(..., true)` sets
 * `synchronous_commit = off` for this statement's own implicit transaction, which commits right
 * after it. A crash can lose at most the last fraction of a second of deltas, never corrupt
 * anything, and the run's own durable commits (launch, settle) flush the WAL past every batch
 * stored before them. On a busy disk that flush was most of each batch's time.
 */
async function insertEvents(orm: Orm, run: LoggedRun, batch: RunEventRecord[], checkpoint: string | null, storedSeq: number): Promise<boolean> {
  const last = batch.length > 0 ? batch[batch.length - 1].seq : storedSeq
  const [row] = await executePrepared(orm, () => orm.em.fork(), 'run_events_insert', INSERT_EVENTS_SQL, [last, checkpoint, run.id, run.attempts, eventsJson(batch)])
  return row?.held === true
}

/** Stored events of run `runId` after `afterSeq`, oldest first, at most {@link READ_BATCH}. */
export async function readEvents(em: Em, runId: number, afterSeq: number): Promise<RunEventRecord[]> {
  const rows = await em.execute<{ seq: number; type: string; data: unknown; created_at: string | Date }[]>(eventsAfter('?', '?'), [runId, afterSeq])
  return rows.map(eventOf)
}

/**
 * A select-list expression for the first {@link READ_BATCH} events after `afterSeq` (a placeholder
 * or SQL) of the run `runAlias.id`, as a JSON array for {@link eventsOf}: a caller that reads the
 * run anyway (its access check, src/runs/runs.service.ts) reads its log in the same statement.
 */
export const eventsAfterSql = (runAlias: string, afterSeq: string): string =>
  `(select coalesce(json_agg(json_build_object('seq', e.seq, 'type', e.type, 'data', e.data, 'created_at', e.created_at) order by e.seq), '[]')
    from (${eventsAfter(`${runAlias}.id`, afterSeq)}) e)`

/** The first {@link READ_BATCH} events of run `runId` after `afterSeq` (placeholders or SQL), oldest first. */
function eventsAfter(runId: string, afterSeq: string): string {
  return `select seq, type, data, created_at from run_events where run_id = ${runId} and seq > ${afterSeq} order by seq limit ${READ_BATCH}`
}

/** The events of an {@link eventsAfterSql} column (parsed by `pg`, text elsewhere), as {@link readEvents} answers them. */
export function eventsOf(value: unknown): RunEventRecord[] {
  const rows = jsonValueOf(value)
  return Array.isArray(rows) ? rows.map(eventOf) : []
}

/** A stored event row (a `Date` from `pg`, an ISO text from JSON) as a record. */
const eventOf = (row: { seq: number; type: string; data: unknown; created_at: string | Date }): RunEventRecord => ({
  seq: Number(row.seq),
  type: row.type,
  data: jsonValueOf(row.data),
  created_at: new Date(row.created_at).toISOString(),
})

/**
 * Milliseconds since run `runId` ended (its final events may still be on their way into the log),
 * or null while it runs. A run gone from the table counts as long ended.
 */
async function endedForMs(em: Em, runId: number): Promise<number | null> {
  const [row] = await em.execute<{ status: string; ended_ms: number | null }[]>(
    `select status, extract(epoch from (now() - coalesce(finished_at, updated_at))) * 1000 as ended_ms from runs where id = ?`,
    [runId],
  )
  if (!row) return Number.POSITIVE_INFINITY
  return ['queued', 'running', 'awaiting_approval'].includes(row.status) ? null : Math.max(0, Number(row.ended_ms))
}

/** How long a follower waits for live events before it looks at the log again (a writer in a process without Redis, or one that died). */
const RECHECK_MS = 2_000
/**
 * How often a follower reads the log while live delivery of its run is not assured (Redis
 * unavailable or the run's subscription down: src/runs/run-bus.ts, `isLive`); events stored in
 * another process then reach it within this.
 */
const POLL_MS = 250
/**
 * How long after a run ended its follower still waits for the final event. The writer stores the
 * final events just after it settles the run, so they normally come within milliseconds (live);
 * a log that has none this long after (its process died) is ended by the follower.
 */
const FINAL_EVENT_GRACE_MS = 5_000
/** Recheck interval while waiting on an ended run's final event. */
const ENDED_RECHECK_MS = 100

/**
 * Every event of run `runId` after `afterSeq`, stored ones first and then live ones as they are
 * stored, ending after the run's final event (or at once when the run has ended and nothing is
 * left). Subscribes before it reads the log, so nothing falls between the two (src/runs/run-bus.ts);
 * `first`, read before the subscription, is followed by such a read. While the
 * bus cannot deliver this run's events live (a Redis outage), reads the log every `POLL_MS`.
 * @param orm forks an EntityManager per read (a follower can outlive its request).
 * @param signal stops following (client gone).
 * @param first the log after `afterSeq` as the caller read it with the run ({@link eventsAfterSql}):
 *   when it holds the final event, those events are the whole answer and neither a subscription nor
 *   another read is needed; otherwise they are sent first, then the follower subscribes and reads
 *   on from the last of them (anything stored in between is in that read).
 */
export async function* followRun(
  orm: Orm,
  bus: RunBus,
  runId: number,
  afterSeq: number,
  signal?: AbortSignal,
  first?: RunEventRecord[],
): AsyncGenerator<RunEventRecord> {
  let last = afterSeq
  for (const event of first ?? []) {
    if (signal?.aborted) return
    last = event.seq
    yield event
    if (FINAL_EVENT_TYPES.has(event.type)) return
  }
  const pending: RunEventRecord[] = []
  let wake: (() => void) | null = null
  const unsubscribe = await bus.subscribe(runId, (events) => {
    pending.push(...events)
    wake?.()
  })
  const onAbort = () => wake?.()
  signal?.addEventListener('abort', onAbort)
  let ended = false
  try {
    while (!signal?.aborted) {
      // What the log holds beyond `last`: at start, after a gap in live delivery, or on a recheck.
      const stored = await readEvents(orm.em.fork(), runId, last)
      for (const event of stored) {
        last = event.seq
        yield event
        if (FINAL_EVENT_TYPES.has(event.type)) return
      }
      if (stored.length === READ_BATCH) continue
      // An ended run whose final event is not stored yet: wait for it (live or on a recheck),
      // unless its writer is gone for good.
      ended = false
      if (stored.length === 0) {
        const endedMs = await endedForMs(orm.em.fork(), runId)
        if (endedMs !== null && endedMs > FINAL_EVENT_GRACE_MS) return
        ended = endedMs !== null
      }
      // Live: deliver in order; a gap (events published before the subscription took) sends us back to the log.
      for (;;) {
        while (pending.length > 0 && !signal?.aborted) {
          const event = pending.shift()
          if (!event || event.seq <= last) continue
          if (event.seq !== last + 1) {
            pending.unshift(event)
            break
          }
          last = event.seq
          yield event
          if (FINAL_EVENT_TYPES.has(event.type)) return
        }
        if (pending.length > 0 || signal?.aborted) break
        const timedOut = await new Promise<boolean>((resolve) => {
          // Waiting on an ended run's final events: look again soon rather than after RECHECK_MS.
          const timer = setTimeout(() => resolve(true), ended ? ENDED_RECHECK_MS : bus.isLive(runId) ? RECHECK_MS : POLL_MS)
          wake = () => {
            clearTimeout(timer)
            resolve(false)
          }
        })
        wake = null
        if (timedOut) break
      }
    }
  } finally {
    signal?.removeEventListener('abort', onAbort)
    await unsubscribe()
  }
}
