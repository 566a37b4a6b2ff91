/**
 * Shared pieces of the agent tests: the exact key lists of the Agent shape, a cast of users with
 * their workspaces and bindable rows, and a counter of the SQL statements a request sends.
 */
import { expect } from 'vitest'
import { VALIDATION_MESSAGE } from '../../src/trpc/errors.ts'
import type { HttpResult, TestApp, TestUser } from './app.ts'
import { issuesName } from './fuzz.ts'
import { insertAccount, insertMedia, insertProvider, insertTool, insertWorkflow, workspaceId, type RowRef } from './rows.ts'
import { WORKFLOW_KEYS } from './workflows.ts'

/** Keys of an agent in a single response (every relation embedded). */
export const AGENT_KEYS = [
  'categories',
  'created_at',
  'description',
  'files',
  'instruction',
  'is_favorite',
  'is_owner',
  'is_template',
  'last_used_at',
  'metadata',
  'name',
  'profile_photo_config',
  'profile_photo_url',
  'shares',
  'threads_count',
  'tools',
  'tools_count',
  'updated_at',
  'usage_count',
  'usage_frequency',
  'user',
  'uuid',
  'version',
  'visibility',
  'workflows',
  'workflows_count',
  'workspace',
]
/** Keys of an agent in a list without `with`: no collections. */
export const AGENT_LIST_KEYS = AGENT_KEYS.filter((key) => !['categories', 'files', 'shares', 'tools', 'workflows'].includes(key))
/** Keys of an element of `tools`: the specification's Tool plus method, url, input_schema, allowed_tools, provider. */
export const AGENT_TOOL_KEYS = [
  'allowed_tools',
  'created_at',
  'credits',
  'description',
  'idempotent',
  'input_schema',
  'is_owner',
  'metadata',
  'method',
  'name',
  'pivot_account',
  'profile_photo_config',
  'profile_photo_url',
  'provider',
  'requires_approval',
  'type',
  'updated_at',
  'url',
  'uuid',
  'visibility',
]
/** Keys of an element of `workflows`: a workflow's own keys (the specification's Workflow plus is_template), no relations. */
export const AGENT_WORKFLOW_KEYS = WORKFLOW_KEYS.filter(
  (key) => !['categories', 'has_webhook_secret', 'is_favorite', 'user', 'webhook_url', 'workspace'].includes(key),
)

/** A user with the id of their primary workspace. */
export interface Member extends TestUser {
  wsId: number
}

/** Turns a test user into a {@link Member}. */
export async function member(t: TestApp, user: TestUser): Promise<Member> {
  return { ...user, wsId: await workspaceId(t, user.workspaceUuid) }
}

/** Everything an agent of `owner` can bind in the owner's primary workspace. */
export interface Bindables {
  provider: RowRef
  account: RowRef
  tool: RowRef
  /** A tool without a provider (needs no account). */
  plainTool: RowRef
  workflow: RowRef
  media: RowRef & { key: string }
  image: RowRef & { key: string }
}

/** Creates a provider, an account, two tools, a workflow, a file and an image of `owner`. */
export async function bindables(t: TestApp, owner: Member): Promise<Bindables> {
  const base = { userId: owner.id, workspaceId: owner.wsId }
  const provider = await insertProvider(t, { ...base, name: 'Weather API' })
  return {
    provider,
    account: await insertAccount(t, { ...base, providerId: provider.id }),
    tool: await insertTool(t, { ...base, providerId: provider.id }),
    plainTool: await insertTool(t, { ...base, name: 'Public holidays' }),
    workflow: await insertWorkflow(t, base),
    media: await insertMedia(t, base),
    image: await insertMedia(t, { ...base, mimeType: 'image/png', name: 'avatar.png' }),
  }
}

let made = 0
/**
 * An agent of `user` created through `POST /api/v1/agents` (named `Agent N` unless `input`
 * names it); answers the response's `data` and fails the test on anything but 201.
 */
export async function makeAgent(t: TestApp, user: { token: string }, input: Record<string, unknown> = {}) {
  made += 1
  const res = await t.http('POST', '/api/v1/agents', { token: user.token, body: { name: `Agent ${made}`, ...input } })
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  return res.body.data
}

/** A read-only application token of `user`. */
export async function readOnlyToken(t: TestApp, user: TestUser): Promise<{ token: string }> {
  const created = await t.as(user).accessTokens.create({ name: 'read only', abilities: ['read'] })
  return { token: created.data.access_token }
}

/**
 * Counts the SQL statements sent while `fn` runs: every statement through MikroORM (the
 * `onQuery` hook sees `em.execute` and the ORM's own queries) plus every named prepared
 * statement sent straight to the `pg` pool on PostgreSQL (src/platform/db.ts `prepared`).
 * Transaction control (begin/commit) is not counted.
 */
export async function countQueries(t: TestApp, fn: () => Promise<unknown>): Promise<string[]> {
  const seen: string[] = []
  const config = t.runtime.orm.config
  const previous = config.get('onQuery')
  config.set('onQuery', (sql: string, params: readonly unknown[]) => {
    seen.push(sql)
    return previous(sql, params)
  })
  const connection: any = t.runtime.orm.em.getConnection()
  const pool: any = t.config.databaseUrl ? await connection.getNativeClient() : null
  const query = pool?.query
  if (pool) {
    pool.query = function (this: unknown, ...args: any[]) {
      seen.push(typeof args[0] === 'string' ? args[0] : String(args[0]?.text))
      return query.apply(this, args)
    }
  }
  try {
    await fn()
  } finally {
    config.set('onQuery', previous)
    if (pool) pool.query = query
  }
  expect(seen.length).toBeGreaterThan(0)
  return seen
}

/**
 * {@link countQueries} for a read that may run again (`fn` changes nothing), run `tries` times:
 * the shortest list of statements seen. The test process's own background work (the sweeps and
 * heartbeats of the run manager, the workflow engine and its schedules, the command room and
 * knowledge ingestion) may send a statement during any one window, and never takes one away, so
 * the shortest list is the request's own. A request whose statements grow with its page still
 * shows that growth in every try. Five tries: on a slow machine (CI on two busy cores) a request
 * takes long enough for three windows in a row to catch a background statement.
 */
export async function countRequestQueries(t: TestApp, fn: () => Promise<unknown>, tries = 5): Promise<string[]> {
  let fewest = await countQueries(t, fn)
  for (let i = 1; i < tries; i += 1) {
    const seen = await countQueries(t, fn)
    if (seen.length < fewest.length) fewest = seen
  }
  return fewest
}

/**
 * A REST 400 (`BAD_REQUEST`, validation message) whose issues name `field` (dotted): an issue
 * at or under it, or an unknown key of its parent, as the fuzz test reads it.
 */
export function expectNamed(res: HttpResult, field: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(400)
  expect(res.body.code).toBe('BAD_REQUEST')
  expect(res.body.message).toBe(VALIDATION_MESSAGE)
  expect(issuesName(res.body.issues ?? [], field.split('.')), `${field} in ${JSON.stringify(res.body.issues)}`).toBe(true)
}
