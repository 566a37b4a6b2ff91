/**
 * The execution rows (docs/api/workflows.md): every execution is recorded before it
 * starts, and how it ended is stored when it ends. {@link ExecutionStore.insert} stores the row
 * and counts the trigger on its workflow; {@link ExecutionStore.settle} stores the end.
 *
 * Both are group commits: the writes that arrive while earlier ones are in flight go to the
 * database together, as one statement and one commit (DataLoader batches them; one batch of
 * a kind is in flight at a time, see {@link IN_FLIGHT}). Each caller still waits for its own row to
 * be committed, so "recorded before it starts" holds for every execution; a busy webhook just
 * pays one commit per batch instead of one per call, and its workflow's `trigger_count` row is
 * locked once per batch instead of once per call (per-call locking serialised every trigger of a
 * workflow behind the previous one's commit). A batch that fails is retried one write at a time,
 * so one bad write never fails the others.
 *
 * A batch that loses its database connection runs again on a new one (docs/operations.md,
 * "Database deadlines"): a settle as it is (it settles only rows still running under the same
 * claim), an insert only after reading back, by the uuids the batch chose for its rows, whether it
 * committed (`writeOnce` of src/platform/db.ts; one statement, so all of its rows or none). Its
 * callers get the rows stored, once, and never an error for a row that exists (a webhook would
 * answer 503 for an execution that then runs).
 */
import DataLoader from 'dataloader'
import type { ExecutionMode } from '../../entities/index.ts'
import { uuidv7 } from 'uuidv7'
import { prepared, retryOnConnectionLoss, writeOnce, type Orm } from '../platform/db.ts'
import { NotFoundError } from '../platform/errors.ts'
import { groupCommit } from '../platform/group-commit.ts'
import { storableJson } from '../access/wire.ts'
import { toDate } from '../platform/sql.ts'
import type { ExecutionResult } from './executor.ts'
import { countExecutionEnds } from './execution-metrics.ts'

/** An execution as the engine needs it. */
export interface ExecutionRecord {
  id: number
  uuid: string
  workflowId: number
  workspaceId: number
  userId: number
  mode: ExecutionMode
  status: 'queued' | 'running'
  createdAt: Date
  /** Claims so far (docs/api/workflows.md): 1 for one recorded `running`, 0 for one `queued`. */
  attempts: number
}

/** What {@link ExecutionStore.insert} stores. */
export interface NewExecution {
  workflowId: number
  userId: number
  mode: ExecutionMode
  /** The trigger's input (stored as given; JSON). */
  input: unknown
  /** `running` (with its start time and heartbeat) when this process runs it now. */
  status: 'queued' | 'running'
  /** The id of the execution this one retries. */
  retryOf?: number | null
  /**
   * Its uuid, when the caller names it before it is stored (a command room firing links it
   * first); by default a new UUIDv7. A uuid that exists fails the insert.
   */
  uuid?: string
  /** The trace it was started in (src/platform/tracing.ts, `activeTraceId`); null or absent: none. */
  traceId?: string | null
}

/**
 * Batches of one kind in flight at once. One: while it waits for its commit the next batch fills
 * up (measured with 50 callers of one webhook: 3,061 executions/s with one, 2,509 with two; a
 * second insert batch would only wait for the first one's lock on the workflow row anyway).
 */
const IN_FLIGHT = 1
/** Inserts per batch at most (bounds one statement's size; webhook inputs may be up to the body limit each). */
const MAX_INSERT_BATCH = 64
/** Settles per batch at most: larger, because settles fall behind first under load (one row update, its node rows). */
const MAX_SETTLE_BATCH = 256
/**
 * Executions that ended and are not stored yet, at most; beyond it new executions wait before
 * they are recorded. Under a load the database cannot keep up with, settles would otherwise pile
 * up in memory while new executions keep being answered: this keeps the backlog (and the time
 * between an execution's end and its row saying so) bounded, and makes callers feel the limit.
 */
export const MAX_UNSETTLED = 1_024

/**
 * Inserts executions (a JSON array of {@link NewExecution}-shaped objects) and adds each one's
 * trigger to its workflow's `trigger_count`, in one statement. A workflow row that is gone gets no
 * execution (its uuid is missing from the answer). An execution's `workspace_id` is always its
 * workflow's (read from the workflow row here, the only place executions are inserted; a workflow
 * never changes workspace): the executions metrics rely on it (src/metrics/metrics.service.ts).
 */
const insertStatement = prepared(
  'workflow_execution_insert_batch',
  `with v as (
     select * from jsonb_to_recordset(?::jsonb) as v(uuid uuid, workflow_id bigint, user_id bigint, status text,
       mode text, input jsonb, retry_of_id bigint, trace_id text, position int)),
   counted as (
     update workflows w set trigger_count = w.trigger_count + c.n
     from (select workflow_id, count(*)::int as n from v group by workflow_id) c
     where w.id = c.workflow_id
     returning w.id, w.workspace_id)
   insert into workflow_executions
     (uuid, workflow_id, workspace_id, user_id, status, mode, input, retry_of_id, trace_id, started_at, heartbeat_at, attempts, created_at, updated_at)
   select v.uuid, v.workflow_id, counted.workspace_id, v.user_id, v.status, v.mode, coalesce(v.input, 'null'::jsonb), v.retry_of_id, v.trace_id,
     case when v.status = 'running' then clock_timestamp() end, clock_timestamp(), case when v.status = 'running' then 1 else 0 end, now(), now()
   from v join counted on counted.id = v.workflow_id
   order by v.position
   returning id::float8 as id, uuid, workspace_id::float8 as workspace_id, created_at`,
)

/**
 * The rows of an insert batch that exist (a comma-separated list of the batch's uuids), with the
 * columns `insertStatement` returns: how a batch whose commit answer was lost finds out whether
 * it committed.
 */
const storedStatement = prepared(
  'workflow_execution_stored_batch',
  `select id::float8 as id, uuid, workspace_id::float8 as workspace_id, created_at
   from workflow_executions where uuid = any(string_to_array(?, ',')::uuid[])`,
)

/**
 * Stores how executions ended (a JSON array, one object per execution), in one statement: each
 * one's status, output, error, duration and `finished_at`, unless it was canceled meanwhile (then
 * it stays `canceled`) or is no longer the settling process's to settle (`attempts` moved on: it
 * was resumed elsewhere, and nothing of this run is stored), its per-node data, and its
 * checkpoint cleared. `finished_at` is the start plus the duration the process measured, so a
 * settle that waited for its batch does not stretch it. No `workflows` row is written: the static
 * data a node changes is stored as that node runs (static-data.ts).
 */
const settleStatement = prepared(
  'workflow_execution_settle_batch',
  `with x as (
     select * from jsonb_to_recordset(?::jsonb) as x(id bigint, attempts int, status text, output jsonb, error text, error_code text,
       error_node_id text, nodes jsonb, duration_ms int)),
   e as (
     update workflow_executions we set
       status = case when we.status = 'running' then x.status else we.status end,
       output = case when we.status = 'running' then coalesce(x.output, 'null'::jsonb) else we.output end,
       error = case when we.status = 'running' then x.error else we.error end,
       error_code = case when we.status = 'running' then x.error_code else we.error_code end,
       error_node_id = case when we.status = 'running' then x.error_node_id else we.error_node_id end,
       finished_at = case when we.status = 'running'
         then coalesce(we.started_at, we.created_at) + x.duration_ms * interval '1 millisecond' else we.finished_at end,
       duration_ms = case when we.status = 'running' then x.duration_ms else we.duration_ms end,
       checkpoint = null,
       updated_at = now()
     from x
     where we.id = x.id and we.status in ('running', 'canceled') and we.attempts = x.attempts
     returning we.id),
   d as (
     insert into workflow_execution_data
       (execution_id, position, node_id, node_type, status, input, output, error, branches, attempts, started_at, finished_at, duration_ms)
     select e.id, n.position, n.node_id, n.node_type, n.status, n.input, n.output, n.error, n.branches, n.attempts,
       n.started_at, n.finished_at, n.duration_ms
     from e join x on x.id = e.id
     cross join lateral jsonb_to_recordset(x.nodes) as n(position int, node_id text, node_type text, status text, input jsonb,
       output jsonb, error jsonb, branches jsonb, attempts int, started_at timestamptz, finished_at timestamptz, duration_ms int)
     returning 1)
   select (select count(*) from d)::int as data`,
)

/** How one execution ended, for {@link ExecutionStore.settle}. */
interface Settled {
  id: number
  /** The claim it ran under ({@link ExecutionRecord.attempts}). */
  attempts: number
  result: ExecutionResult
  durationMs: number
}

/** A JSON string literal, or `null`. */
const jsonText = (value: string | null | undefined): string => (value == null ? 'null' : JSON.stringify(value))

/** One execution of an insert batch as JSON (the input is serialized once, by {@link storableJson}). */
function insertItem(o: NewExecution, uuid: string, position: number): string {
  return (
    `{"uuid":"${uuid}","workflow_id":${o.workflowId},"user_id":${o.userId},` +
    `"status":${jsonText(o.status)},"mode":${jsonText(o.mode)},"input":${storableJson(o.input)},` +
    `"retry_of_id":${o.retryOf ?? null},"trace_id":${jsonText(o.traceId)},"position":${position}}`
  )
}

/** One execution of a settle batch as JSON. */
function settleItem({ id, attempts, result, durationMs }: Settled): string {
  return (
    `{"id":${id},"attempts":${attempts},"duration_ms":${Math.max(0, Math.round(durationMs))},"status":${jsonText(result.status)},"output":${storableJson(result.output)},` +
    `"error":${jsonText(result.error?.message)},"error_code":${jsonText(result.error?.code)},` +
    `"error_node_id":${jsonText(result.error?.node_id)},"nodes":${storableJson(result.nodes)}}`
  )
}

/** Writes execution rows for one process (one per ORM; see the module comment). */
export class ExecutionStore {
  readonly #inserts: DataLoader<NewExecution, ExecutionRecord>
  readonly #settles: DataLoader<Settled, void>
  /** Settles handed over and not committed yet. */
  #unsettled = 0
  /** Inserts waiting for the settle backlog to shrink below {@link MAX_UNSETTLED}. */
  readonly #waiting: (() => void)[] = []

  constructor(orm: Orm) {
    const em = () => orm.em.fork()
    this.#inserts = groupCommit(MAX_INSERT_BATCH, async (batch) => {
      const uuids = batch.map((o) => o.uuid ?? uuidv7())
      const json = `[${batch.map((o, i) => insertItem(o, uuids[i], i)).join(',')}]`
      // Rows of the batch found after a lost connection: it committed (a workflow deleted
      // meanwhile leaves its uuids out, as the insert would have); none: it did not.
      const stored = async () => {
        const found = await storedStatement(orm, em, [uuids.join(',')])
        return found.length > 0 ? found : undefined
      }
      const rows = await writeOnce(() => insertStatement(orm, em, [json]), stored)
      const byUuid = new Map(rows.map((row) => [String(row.uuid), row]))
      return batch.map((o, i): ExecutionRecord | Error => {
        const row = byUuid.get(uuids[i])
        if (!row) return new NotFoundError('Workflow')
        return {
          id: Number(row.id),
          uuid: uuids[i],
          workflowId: o.workflowId,
          workspaceId: Number(row.workspace_id),
          userId: o.userId,
          mode: o.mode,
          status: o.status,
          createdAt: toDate(row.created_at as Date | string),
          attempts: o.status === 'running' ? 1 : 0,
        }
      })
    }, IN_FLIGHT)
    this.#settles = groupCommit(MAX_SETTLE_BATCH, async (batch) => {
      // Runs again on a new connection when the server ended this one: the statement settles
      // only rows still running under the same claim, so a second run after a commit whose
      // answer was lost stores nothing twice (an execution whose end is not stored would be
      // failed as abandoned once its heartbeat stops).
      const json = `[${batch.map(settleItem).join(',')}]`
      await retryOnConnectionLoss(() => settleStatement(orm, em, [json]))
      return batch.map(() => undefined)
    }, IN_FLIGHT)
  }

  /**
   * Records an execution (`queued`, or `running` with its start time and heartbeat) and adds one
   * to its workflow's `trigger_count`; resolves once that is committed, once, though the
   * connection may be lost on the way (module comment).
   * Waits first while {@link MAX_UNSETTLED} ended executions are not stored yet.
   * @throws NotFoundError when the workflow row is gone; the database's error when it fails, or
   *   when its connection stays lost for `DATABASE_RETRY_MS` (then it was not stored, unless the
   *   database answered none of the reads that would have found it).
   */
  async insert(o: NewExecution): Promise<ExecutionRecord> {
    while (this.#unsettled >= MAX_UNSETTLED) await new Promise<void>((resolve) => this.#waiting.push(resolve))
    return this.#inserts.load(o)
  }

  /**
   * Stores how execution `id` ended (see `settleStatement`); resolves once that is committed.
   * @param attempts the claim it ran under; nothing is stored when the row has moved on.
   * @param durationMs how long it ran, in milliseconds, as this process measured it.
   */
  async settle(id: number, attempts: number, result: ExecutionResult, durationMs: number): Promise<void> {
    this.#unsettled++
    try {
      await this.#settles.load({ id, attempts, result, durationMs })
      // A canceled one was counted when it was marked canceled (./execution-metrics.ts).
      if (result.status !== 'canceled') countExecutionEnds(result.status)
    } finally {
      this.#unsettled--
      if (this.#unsettled < MAX_UNSETTLED) for (const resolve of this.#waiting.splice(0)) resolve()
    }
  }

  /** Ended executions whose settle is not committed yet. */
  get unsettled(): number {
    return this.#unsettled
  }

  /** Inserts held back by the settle backlog (see {@link MAX_UNSETTLED}). */
  get held(): number {
    return this.#waiting.length
  }
}
