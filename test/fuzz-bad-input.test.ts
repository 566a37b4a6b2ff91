/**
 * Bad input never yields a 5xx or changes stored data (docs/api/conventions.md, "Errors"): every REST
 * operation of the served OpenAPI document gets malformed JSON, non-objects, wrong content types,
 * wrong types per field, unknown fields, huge strings and bodies, unstorable and odd unicode, odd
 * numbers, deep nesting, odd query strings and path parameters, and missing, wrong, expired or
 * revoked credentials (cases: test/helpers/fuzz-cases.ts). Every answer must be a 4xx with a JSON
 * `{message, code}` (and `issues` naming the field for a validation error), every table must be
 * unchanged afterwards, and another tenant's workspace must never show in a body.
 */
import http from 'node:http'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { casesFor, pathFor, type FuzzTargets } from './helpers/fuzz-cases.ts'
import {
  operationsOf,
  pool,
  problemsOf,
  rawRequest,
  resolver,
  type FuzzCase,
  type OpenApiDocument,
  type RawResponse,
} from './helpers/fuzz.ts'

const CONCURRENCY = 8
/** Columns that change on reads (token bookkeeping), left out of the before/after comparison. */
const VOLATILE_COLUMNS = ['last_used_at']

type Snapshot = Record<string, string[]>

describe('bad input on every REST endpoint (docs/api/conventions.md)', () => {
  let t: TestApp
  let agent: http.Agent
  let cases: FuzzCase[]
  let operations: ReturnType<typeof operationsOf>
  /** Operation id -> whether it answered 401 to a request without a token. */
  let needsToken: Map<string, boolean>
  let ownParams: Record<string, string>
  /** The caller's valid Authorization header. */
  let callerAuth: string
  /** Another tenant's identifiers that no answer to the caller may contain. */
  let secrets: Record<string, string>
  const bodies: { label: string; text: string }[] = []

  const send = async (c: FuzzCase): Promise<RawResponse> => {
    const res = await rawRequest(agent, t.url, c)
    bodies.push({ label: c.label, text: res.text })
    return res
  }

  /** Runs cases; returns one line per wrong answer, and logs how many got which status. */
  const run = async (batch: FuzzCase[], name: string): Promise<string[]> => {
    const results = await pool(batch, CONCURRENCY, send)
    const statuses = new Map<number, number>()
    for (const res of results) statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1)
    const histogram = [...statuses].sort(([a], [b]) => a - b).map(([status, count]) => `${status}: ${count}`)
    console.info(`fuzz ${name}: ${batch.length} requests over ${operations.length} operations (${histogram.join(', ')})`)
    return batch.flatMap((c, i) => {
      const problems = problemsOf(c, results[i])
      return problems.length ? [`${c.label}: ${problems.join('; ')} -> ${results[i].status} ${results[i].text.slice(0, 200)}`] : []
    })
  }

  /** Every row of every table, as JSON text without the volatile columns. */
  const snapshot = async (): Promise<Snapshot> => {
    const tables = await t.sql(
      `select table_name as name from information_schema.tables
       where table_schema = current_schema() and table_type = 'BASE TABLE' and table_name not like 'mikro_orm%' order by 1`,
    )
    const drop = `'{${VOLATILE_COLUMNS.join(',')}}'::text[]`
    const result: Snapshot = {}
    for (const { name } of tables) {
      const rows = await t.sql(`select (to_jsonb(x) - ${drop})::text as row from "${String(name)}" x order by 1`)
      result[String(name)] = rows.map((row) => String(row.row))
    }
    return result
  }

  const changes = (before: Snapshot, after: Snapshot): string[] =>
    Object.keys({ ...before, ...after }).flatMap((table) => {
      const was = new Set(before[table] ?? [])
      const now = new Set(after[table] ?? [])
      const removed = [...was].filter((row) => !now.has(row)).map((row) => `${table}: row changed or removed: ${row.slice(0, 300)}`)
      const added = [...now].filter((row) => !was.has(row)).map((row) => `${table}: row changed or added: ${row.slice(0, 300)}`)
      return [...removed, ...added]
    })

  /** A summary by kind of problem, then the first lines. */
  const report = (lines: string[], total: number) => {
    const kinds = new Map<string, number>()
    for (const line of lines) {
      const kind = /^\w+: row changed/.test(line)
        ? line.replace(/ or (removed|added): .*$/, '')
        : line
            .replace(/^.*?\]: /, '')
            .replace(/ -> .*$/, '')
            .replace(/\d{3}/g, 'NNN')
      kinds.set(kind, (kinds.get(kind) ?? 0) + 1)
    }
    const summary = [...kinds].map(([kind, count]) => `  ${count} x ${kind}`).join('\n')
    return `${lines.length} of ${total} checks failed:\n${summary}\n\n${lines.slice(0, 250).join('\n')}`
  }

  beforeAll(async () => {
    t = await createTestApp({ SIGN_IN_MAX_PER_EMAIL: '1000000', SIGN_IN_MAX_PER_ADDRESS: '1000000' })
    // No keep-alive: 413 and 431 answers close their connection, which a reused socket races.
    agent = new http.Agent({ keepAlive: false, maxSockets: CONCURRENCY })
    const expectStatus = async (status: number, ...args: Parameters<TestApp['http']>) => {
      const res = await t.http(...args)
      expect(res.status, `${args[0]} ${args[1]}: ${JSON.stringify(res.body)}`).toBe(status)
      return res.body?.data
    }
    const createToken = (user: TestUser, name: string) =>
      expectStatus(201, 'POST', '/api/v1/access-tokens', { token: user.token, body: { name } })

    // The caller: a second workspace with a member, an application token; and dead credentials.
    const ada = await t.make.user({ name: 'Ada Fuzz' })
    const member = await t.make.user({ name: 'Carl Member' })
    const outsider = await t.make.user({ name: 'Dora Outsider' })
    const acme = await t.make.user({ name: 'Acme Scoped', serviceKey: 'acme-service-key-0123456789' })
    const workspace = await expectStatus(201, 'POST', '/api/v1/workspaces', { token: ada.token, body: { name: 'Fuzz Target' } })
    await expectStatus(201, 'POST', `/api/v1/workspaces/${workspace.uuid}/members`, {
      token: ada.token,
      body: { user_id: member.id, role: 'member' },
    })
    const token = await createToken(ada, 'fuzz target')
    const revoked = await createToken(ada, 'revoked')
    await expectStatus(204, 'DELETE', `/api/v1/access-tokens/${revoked.uuid}`, { token: ada.token })
    const expired = await createToken(ada, 'expired')
    await t.sql(`update access_tokens set expires_at = now() - interval '1 day' where uuid = ?`, [expired.uuid])
    const session = await expectStatus(200, 'POST', '/api/v1/auth/sign-in', { body: { email: ada.email, password: ada.password } })
    await expectStatus(204, 'POST', '/api/v1/auth/logout', { token: session.access_token })

    // Another tenant, with a second workspace and a token of their own.
    const bob = await t.make.user({ name: 'Bob Globex' })
    const bobWorkspace = await expectStatus(201, 'POST', '/api/v1/workspaces', {
      token: bob.token,
      body: { name: 'Globex Secret Plans', slug: 'globex-secret-plans' },
    })
    const bobToken = await createToken(bob, 'globex')
    secrets = {
      "another tenant's primary workspace uuid": bob.workspaceUuid,
      "another tenant's workspace uuid": bobWorkspace.uuid,
      "another tenant's workspace slug": bobWorkspace.slug,
      "another tenant's token uuid": bobToken.uuid,
      "another tenant's e-mail": bob.email,
    }

    callerAuth = `Bearer ${ada.token}`
    // One resource of each kind for the caller and for the other tenant, in their primary workspaces.
    const resources = async (user: TestUser, tag: string) => {
      const post = (path: string, body: Record<string, unknown>) => expectStatus(201, 'POST', path, { token: user.token, body })
      const provider = await post('/api/v1/providers', { name: `${tag} tools`, type: 'tool', base_url: `https://${tag}.test` })
      const account = await post('/api/v1/accounts', { name: `${tag} key`, provider_uuid: provider.uuid, secret: `sk-${tag}-0000000000` })
      const tool = await post('/api/v1/tools', { name: `${tag} tool`, url: `https://${tag}.test/x`, provider_uuid: provider.uuid })
      const workflow = await post('/api/v1/workflows', { name: `${tag} workflow` })
      const prompt = await post('/api/v1/prompts', { name: `${tag} prompt`, content: 'Hello {{name}}' })
      const agent = await post('/api/v1/agents', {
        name: `${tag} agent`,
        tools: [{ tool_uuid: tool.uuid, account_uuid: account.uuid }],
        workflows: [{ workflow_uuid: workflow.uuid }],
      })
      const thread = await post('/api/v1/threads', { agent_uuid: agent.uuid })
      const message = await post('/api/v1/messages', { thread_uuid: thread.uuid, role: 'user', content: `${tag} says hello` })
      // No provider key here: the run answers with the built-in local test model.
      const ran = await expectStatus(200, 'POST', `/api/v1/agents/${agent.uuid}/run`, { token: user.token, body: { input: `${tag} runs` } })
      const [memory] = await t.sql(
        `insert into memories (uuid, content, agent_id, user_id, workspace_id, created_at, updated_at)
         select gen_random_uuid(), ?, a.id, a.user_id, a.workspace_id, now(), now() from agents a where a.uuid = ? returning uuid`,
        [`${tag} likes tea`, agent.uuid],
      )
      // An ended execution of the workflow, inserted as the engine would store it.
      const [execution] = await t.sql(
        `insert into workflow_executions (uuid, workflow_id, workspace_id, user_id, status, mode, created_at, updated_at)
         select gen_random_uuid(), w.id, w.workspace_id, w.user_id, 'succeeded', 'manual', now(), now() from workflows w where w.uuid = ?
         returning uuid`,
        [workflow.uuid],
      )
      // A trained document of the agent, stored as ingestion would leave it.
      const [document] = await t.sql(
        `insert into knowledge_documents (uuid, agent_id, user_id, workspace_id, name, source_type, source_text, mime_type, size_bytes, status, created_at, updated_at)
         select gen_random_uuid(), a.id, a.user_id, a.workspace_id, ?, 'text', ?, 'text/plain', 5, 'ready', now(), now() from agents a where a.uuid = ? returning uuid`,
        [`${tag} notes`, `${tag} knows things`, agent.uuid],
      )
      // A tool call waiting for approval (the local test model calls a tool when told to).
      const careful = await post('/api/v1/tools', { name: `${tag}careful`, url: `https://${tag}.test/careful`, requires_approval: true })
      const waiter = await post('/api/v1/agents', { name: `${tag} waiter`, tools: [{ tool_uuid: careful.uuid }] })
      const waited = await expectStatus(200, 'POST', `/api/v1/agents/${waiter.uuid}/run`, {
        token: user.token,
        body: { input: `/call ${tag}careful {}` },
      })
      // A paused command room task of the agent (paused: it never fires during the fuzzing).
      const task = await post('/api/v1/command-room/tasks', {
        name: `${tag} task`,
        agent_uuid: agent.uuid,
        input: `${tag} asks`,
        schedule: 'daily',
        is_active: false,
      })
      // A budget that only alerts: it never refuses the fuzzed runs.
      const budget = await post('/api/v1/budgets', {
        name: `${tag} budget`,
        scope: 'workspace',
        period: 'month',
        limit_tokens: 1_000_000_000,
        action: 'notify',
      })
      // A dataset with one item (docs/api/evaluations.md).
      const dataset = await post('/api/v1/datasets', { name: `${tag} dataset` })
      const [datasetItem] = await post(`/api/v1/datasets/${dataset.uuid}/items`, { items: [{ input: `${tag} asks`, expected_output: `${tag} expects` }] })
      // An evaluation of it, ended before the fuzzing starts (its runs would change the stored rows).
      const evaluation = await expectStatus(202, 'POST', '/api/v1/evaluations', {
        token: user.token,
        body: { name: `${tag} evaluation`, dataset_uuid: dataset.uuid, agent_uuid: agent.uuid, scorers: [{ type: 'exact_match' }] },
      })
      for (let tries = 0; tries < 200; tries++) {
        const read = await expectStatus(200, 'GET', `/api/v1/evaluations/${evaluation.uuid}`, { token: user.token })
        if (!['queued', 'running'].includes(read.status)) break
        await new Promise((resolve) => setTimeout(resolve, 100))
      }
      // A webhook endpoint (its host never resolves: attempts fail quietly) and the delivery of a ping.
      const endpoint = await post('/api/v1/webhook-endpoints', { url: `https://${tag}.test/hooks`, event_types: ['run.failed'] })
      const ping = await expectStatus(202, 'POST', `/api/v1/webhook-endpoints/${endpoint.uuid}/ping`, { token: user.token })
      // The newest event of the workspace's audit log (the endpoint's creation).
      const [auditEvent] = await expectStatus(200, 'GET', '/api/v1/audit-events?per_page=1', { token: user.token })
      return {
        audit_event_uuid: auditEvent.uuid as string,
        endpoint_uuid: endpoint.uuid as string,
        delivery_uuid: ping.uuid as string,
        budget_uuid: budget.uuid as string,
        task_uuid: task.uuid as string,
        approval_uuid: String(waited.approvals[0]?.uuid),
        document_uuid: String(document.uuid),
        execution_uuid: String(execution.uuid),
        thread_uuid: thread.uuid as string,
        message_uuid: message.uuid as string,
        run_uuid: ran.run.uuid as string,
        memory_uuid: String(memory.uuid),
        provider_uuid: provider.uuid as string,
        account_uuid: account.uuid as string,
        tool_uuid: tool.uuid as string,
        workflow_uuid: workflow.uuid as string,
        prompt_uuid: prompt.uuid as string,
        dataset_uuid: dataset.uuid as string,
        item_uuid: datasetItem.uuid as string,
        evaluation_uuid: evaluation.uuid as string,
        agent_uuid: agent.uuid as string,
      }
    }
    const adaResources = await resources(ada, 'ada')
    const bobResources = await resources(bob, 'bobglobex')
    for (const [param, uuid] of Object.entries(bobResources)) secrets[`another tenant's ${param}`] = uuid

    // An OAuth client (docs/api/mcp.md, "Authorization"): registered by anyone, no tenant's resource.
    const registration = await fetch(`${t.url}/oauth/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ client_name: 'Fuzz client', redirect_uris: ['http://127.0.0.1:1/callback'] }),
    })
    const { client_id: clientId } = (await registration.json()) as { client_id: string }

    // `version`: every agent has version 1.
    ownParams = {
      client_id: clientId,
      workspace_uuid: workspace.uuid,
      user_id: String(member.id),
      token_uuid: token.uuid,
      model: 'local-test-model',
      version: '1',
      ...adaResources,
      // GET evaluations/compare: the evaluation against itself.
      base: adaResources.evaluation_uuid,
      candidate: adaResources.evaluation_uuid,
    }
    let emails = 0
    const targets: FuzzTargets = {
      token: ada.token,
      own: ownParams,
      foreign: { workspace_uuid: bobWorkspace.uuid, user_id: String(bob.id), token_uuid: bobToken.uuid, ...bobResources },
      badAuth: [
        { label: 'no token', headers: {} },
        { label: 'empty bearer', headers: { authorization: 'Bearer ' } },
        { label: 'malformed', headers: { authorization: 'Bearer !!not-a-token!!' } },
        { label: 'unknown', headers: { authorization: `Bearer wst_${'A'.repeat(43)}` } },
        { label: 'Basic scheme', headers: { authorization: `Basic ${Buffer.from(`${ada.email}:${ada.password}`).toString('base64')}` } },
        { label: 'token without scheme', headers: { authorization: ada.token } },
        { label: 'token with a suffix', headers: { authorization: `Bearer ${ada.token}x` } },
        { label: 'oversized', headers: { authorization: `Bearer ${'a'.repeat(8000)}` } },
        { label: 'revoked application token', headers: { authorization: `Bearer ${revoked.access_token}` } },
        { label: 'expired application token', headers: { authorization: `Bearer ${expired.access_token}` } },
        { label: 'logged-out basic token', headers: { authorization: `Bearer ${session.access_token}` } },
        { label: "another service's token without its key", headers: { authorization: `Bearer ${acme.token}` } },
        {
          label: "valid token under another service's key",
          headers: { authorization: `Bearer ${ada.token}`, 'x-service-authorization': 'globex-service-key-0123456789' },
        },
      ],
      hints: {
        'workspaces-members-add': { user_id: outsider.id },
        'workspaces-members-update': { role: 'admin' },
        'workspaces-update': { name: 'Hijacked by fuzz' },
        'workflows-share': { entity_type: 'user', entity_id: member.id, permission: 'read' },
      },
      email: () => `fuzz-${(emails += 1)}@example.com`,
    }

    const doc = await t.http('GET', '/openapi.json')
    expect(doc.status).toBe(200)
    const openApi: OpenApiDocument = doc.body
    // The workflow webhook takes any content type, query and body by design (they are the graph's
    // input) and knows no bearer token: its bad input is tested in workflow-runs.test.ts.
    // A2A speaks JSON-RPC: bad input is a JSON-RPC error in a 200, and its card is a protocol's
    // well-known document (unknown query parameters ignored): test/a2a.test.ts covers both.
    operations = operationsOf(openApi).filter((op) => !op.path.startsWith('/api/v1/hooks/') && !op.path.startsWith('/api/v1/a2a/'))
    // Which operations need a token, from the server rather than the document: without a token
    // and with an unknown field, an authenticated one answers 401 and a public one 400 (or 200).
    needsToken = new Map()
    for (const op of operations) {
      const res = await rawRequest(agent, t.url, {
        method: op.method,
        url: pathFor(op, ownParams) + (op.body ? '' : '?fuzz_unknown=1'),
        headers: op.body ? { 'content-type': 'application/json' } : {},
        body: op.body ? '{"fuzz_unknown":1}' : undefined,
      })
      needsToken.set(op.id, res.status === 401)
    }
    cases = operations.flatMap((op) => casesFor({ ...op, protected: needsToken.get(op.id) ?? true }, targets, resolver(openApi)))
  })

  afterAll(async () => {
    agent?.destroy()
    await t?.close()
  })

  it('covers every operation of the OpenAPI document', () => {
    const covered = new Set(cases.map((c) => c.label.split(' [')[0]))
    expect(operations.length).toBeGreaterThanOrEqual(15)
    expect([...covered].sort()).toEqual(operations.map((op) => `${op.method} ${op.path}`).sort())
  })

  it('documents a bearer token on exactly the operations that require one', () => {
    const wrong = operations
      .filter((op) => op.protected !== needsToken.get(op.id))
      .map(
        (op) =>
          `${op.method} ${op.path}: document says ${op.protected ? 'protected' : 'public'}, server answers ${needsToken.get(op.id) ? '401 without a token' : 'without a token'}`,
      )
    expect(wrong, wrong.join('\n')).toEqual([])
    expect([...needsToken.values()].filter(Boolean).length).toBeGreaterThan(0)
  })

  it('answers every invalid request with a 4xx JSON error naming the field, and changes no row', async () => {
    const before = await snapshot()
    expect(Object.keys(before)).toEqual(expect.arrayContaining(['users', 'workspaces', 'workspace_members', 'access_tokens', 'shares']))
    const strict = cases.filter((c) => !c.mayBeValid)
    const failures = await run(strict, 'invalid input')
    const changed = changes(before, await snapshot())
    expect([...failures, ...changed], report([...failures, ...changed], strict.length)).toEqual([])
  }, 360_000)

  it('answers odd but valid text without a 5xx, and every read still answers afterwards', async () => {
    const lenient = cases.filter((c) => c.mayBeValid)
    const failures = await run(lenient, 'odd but maybe valid input')
    // What was stored must still pass the output schemas.
    const reads: FuzzCase[] = operations
      .filter((op) => op.method === 'GET')
      .map((op) => {
        const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => ownParams[name] ?? name)
        // Required filters (`thread_uuid` of GET /messages) take the caller's own value.
        const params = new URLSearchParams(op.queryParams.some((p) => p.name === 'per_page') ? { per_page: '100' } : {})
        for (const p of op.queryParams) if (p.required && ownParams[p.name]) params.set(p.name, ownParams[p.name])
        const query = params.size > 0 ? `?${params}` : ''
        return {
          label: `${op.method} ${op.path} [read back]`,
          method: 'GET',
          url: path + query,
          headers: { authorization: callerAuth },
          status: [200],
        }
      })
    const readFailures = await run(reads, 'reads back')
    expect([...failures, ...readFailures], report([...failures, ...readFailures], lenient.length + reads.length)).toEqual([])
    // About 6,000 requests: over a minute alone on a loaded two-core machine, twice that beside another test file.
  }, 300_000)

  it("never shows another tenant's workspace in any answer", () => {
    const leaks = bodies.flatMap(({ label, text }) =>
      Object.entries(secrets).flatMap(([what, value]) => (text.includes(value) ? [`${label}: shows ${what}`] : [])),
    )
    expect(bodies.length).toBeGreaterThan(1000)
    expect(leaks, leaks.slice(0, 50).join('\n')).toEqual([])
  })
})
