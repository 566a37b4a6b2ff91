/**
 * Shared pieces of the workflow execution tests (test/workflow-executions*.test.ts): the keys of
 * the shapes, a cast (alice owns her workspace, carol is a `member` there, bob is another
 * tenant) with workflows of each visibility, execution rows inserted by SQL with known statuses
 * and dates. The app works no queue (`WORKER=false`): a retried execution stays queued in pg-boss.
 */
import { expect } from 'vitest'
import { createTestApp, type HttpResult, type TestApp } from './app.ts'
import { member, type Member } from './agents.ts'

/** Keys of a WorkflowExecution. */
export const EXECUTION_KEYS = [
  'created_at',
  'duration_ms',
  'error',
  'finished_at',
  'input',
  'mode',
  'output',
  'retry_of_uuid',
  'started_at',
  'status',
  'trace_id',
  'updated_at',
  'user',
  'uuid',
  'workflow',
]
/** Keys of a WorkflowExecutionData. */
export const DATA_KEYS = ['attempts', 'branches', 'duration_ms', 'error', 'finished_at', 'input', 'node_id', 'node_type', 'output', 'started_at', 'status']
export const BASE = '/api/v1/workflow-executions'

/** An execution row's keys. */
export interface Exec {
  id: number
  uuid: string
}

/** What an inserted execution holds; timestamps are ISO strings. */
export interface ExecValues {
  status: string
  at: string
  /** Default: alice; null for none. */
  userId?: number | null
  mode?: string
  input?: unknown
  output?: unknown
  error?: [code: string, message: string, node: string | null]
  startedAt?: string | null
  finishedAt?: string | null
  durationMs?: number | null
}

type Caller = { token: string }

export interface ExecutionsCast {
  t: TestApp
  alice: Member
  carol: Member
  bob: Member
  /** Workflows by key: `shared` and `ops` (alice, workspace), `private` (alice), `bob` (bob's workspace). */
  wf: Record<'shared' | 'private' | 'ops' | 'bob', { uuid: string; id: number; name: string }>
  /** An execution of workflow `key`, in that workflow's workspace. */
  insert: (key: keyof ExecutionsCast['wf'], v: ExecValues) => Promise<Exec>
  /** One node's data row of an execution. */
  insertData: (execution: Exec, position: number, v: Record<string, unknown>) => Promise<void>
  /** The stored columns the tests check. */
  rowOf: (execution: Exec) => Promise<Record<string, unknown>>
  /** Requests as `user`; carol's name alice's workspace (her own primary workspace is the default context). */
  get: (user: Caller, path: string, headers?: Record<string, string>) => Promise<HttpResult>
  post: (user: Caller, path: string, body?: unknown) => Promise<HttpResult>
  del: (user: Caller, path: string) => Promise<HttpResult>
}

/** The uuids of a list answer, in order. */
export const uuids = (res: HttpResult): string[] => res.body.data.map((item: { uuid: string }) => item.uuid)

/** Starts an app without a queue worker (nothing may pick up the inserted rows) and makes the cast. */
export async function executionsCast(): Promise<ExecutionsCast> {
  const t = await createTestApp({ WORKER: 'false' })
  const alice = await member(t, await t.make.user({ name: 'Alice Liddell' }))
  const carol = await member(t, await t.make.user({ name: 'Carol Member' }))
  const bob = await member(t, await t.make.user({ name: 'Bob Builder' }))
  await t.make.member(alice.workspaceUuid, alice, carol, 'member')

  const workflow = async (user: Member, visibility: 'private' | 'workspace', name: string) => {
    const res = await t.http('POST', '/api/v1/workflows', { token: user.token, body: { name, visibility } })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    const [row] = await t.sql('select id::float8 as id from workflows where uuid = ?', [res.body.data.uuid])
    return { uuid: String(res.body.data.uuid), id: Number(row.id), name }
  }
  const wf: ExecutionsCast['wf'] = {
    shared: await workflow(alice, 'workspace', 'Shared flow'),
    private: await workflow(alice, 'private', 'Private flow'),
    ops: await workflow(alice, 'workspace', 'Ops flow'),
    bob: await workflow(bob, 'workspace', 'Globex secret flow'),
  }

  const insert: ExecutionsCast['insert'] = async (key, v) => {
    // heartbeat_at far ahead: no recovery sweep takes a `running` row here for an abandoned one.
    const [row] = await t.sql(
      `insert into workflow_executions (uuid, workflow_id, workspace_id, user_id, status, mode, input, output, error_code, error, error_node_id,
         started_at, finished_at, duration_ms, heartbeat_at, created_at, updated_at)
       values (gen_random_uuid(), ?, ?, ?, ?, ?, ?::jsonb, ?::jsonb, ?, ?, ?, ?::timestamptz, ?::timestamptz, ?,
         now() + interval '1 day', ?::timestamptz, ?::timestamptz)
       returning id::float8 as id, uuid`,
      [
        wf[key].id,
        key === 'bob' ? bob.wsId : alice.wsId,
        v.userId === undefined ? alice.id : v.userId,
        v.status,
        v.mode ?? 'manual',
        v.input === undefined ? null : JSON.stringify(v.input),
        v.output === undefined ? null : JSON.stringify(v.output),
        v.error?.[0] ?? null,
        v.error?.[1] ?? null,
        v.error?.[2] ?? null,
        v.startedAt ?? null,
        v.finishedAt ?? null,
        v.durationMs ?? null,
        v.at,
        v.at,
      ],
    )
    return { id: Number(row.id), uuid: String(row.uuid) }
  }

  const insertData: ExecutionsCast['insertData'] = async (execution, position, v) => {
    await t.sql(
      `insert into workflow_execution_data (execution_id, position, node_id, node_type, status, input, output, error, branches, attempts,
         started_at, finished_at, duration_ms)
       values (?, ?, ?, ?, ?, ?::jsonb, ?::jsonb, ?::jsonb, ?::jsonb, ?, ?::timestamptz, ?::timestamptz, ?)`,
      [
        execution.id,
        position,
        v.node_id,
        v.node_type,
        v.status,
        JSON.stringify(v.input ?? null),
        JSON.stringify(v.output ?? null),
        v.error === undefined ? null : JSON.stringify(v.error),
        v.branches === undefined ? null : JSON.stringify(v.branches),
        v.attempts ?? 1,
        v.started_at ?? null,
        v.finished_at ?? null,
        v.duration_ms ?? null,
      ],
    )
  }

  const rowOf: ExecutionsCast['rowOf'] = async (execution) =>
    (
      await t.sql(
        `select status, mode, error_code, error, finished_at, duration_ms, user_id, retry_of_id::float8 as retry_of_id, input::text as input
         from workflow_executions where id = ?`,
        [execution.id],
      )
    )[0]

  const contextOf = (user: Caller): Record<string, string> => (user === carol ? { 'X-Workspace-UUID': alice.workspaceUuid } : {})
  return {
    t,
    alice,
    carol,
    bob,
    wf,
    insert,
    insertData,
    rowOf,
    get: (user, path, headers = {}) => t.http('GET', path, { token: user.token, headers: { ...contextOf(user), ...headers } }),
    post: (user, path, body) => t.http('POST', path, { token: user.token, headers: contextOf(user), body }),
    del: (user, path) => t.http('DELETE', path, { token: user.token, headers: contextOf(user) }),
  }
}
