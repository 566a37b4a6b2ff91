/**
 * The execution rows (API.md section 7; issue 6 item 3): every execution is recorded before it
 * starts. {@link insertExecution} stores the row and counts the trigger on its workflow in one
 * statement; the engine (engine.ts) then runs it here or hands it to the queue.
 */
import type { ExecutionMode } from '../../entities/index.ts'
import { uuidv7 } from 'uuidv7'
import { prepared, type Em, type Orm } from '../db.ts'
import { storableJson, toDate } from '../schemas/wire.ts'

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
}

/** Runs on every trigger: a named prepared statement on PostgreSQL (parsed and planned once per connection). */
const insertStatement = prepared(
  'workflow_execution_insert',
  `with counted as (update workflows set trigger_count = trigger_count + 1 where id = ? returning id)
   insert into workflow_executions
     (uuid, workflow_id, workspace_id, user_id, status, mode, input, retry_of_id, started_at, heartbeat_at, created_at, updated_at)
   select ?::uuid, counted.id, ?, ?, ?, ?, ?::jsonb, ?::bigint,
     case when ?::text = 'running' then clock_timestamp() end, clock_timestamp(), now(), now()
   from counted
   returning id::float8 as id, uuid, created_at`,
)

/**
 * Inserts an execution (`queued`, or `running` with its start time and heartbeat when this
 * process runs it now) and adds one to the workflow's `trigger_count`, in one statement.
 * @param o.input the trigger's input (stored as given; JSON).
 * @param o.retryOf the id of the execution this one retries.
 */
export async function insertExecution(
  orm: Orm,
  em: () => Em,
  o: {
    workflowId: number
    workspaceId: number
    userId: number
    mode: ExecutionMode
    input: unknown
    status: 'queued' | 'running'
    retryOf?: number | null
  },
): Promise<ExecutionRecord> {
  const [row] = await insertStatement(orm, em, [
    o.workflowId,
    uuidv7(),
    o.workspaceId,
    o.userId,
    o.status,
    o.mode,
    storableJson(o.input),
    o.retryOf ?? null,
    o.status,
  ])
  return {
    id: Number(row.id),
    uuid: String(row.uuid),
    workflowId: o.workflowId,
    workspaceId: o.workspaceId,
    userId: o.userId,
    mode: o.mode,
    status: o.status,
    createdAt: toDate(row.created_at as Date | string),
  }
}
