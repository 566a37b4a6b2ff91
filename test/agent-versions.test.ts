/**
 * Agent versions (docs/api/versions.md): a version for every change of a behaviour field and none
 * for anything else, the versions list and one version with its snapshot, notes, restore (also of
 * a snapshot whose tool is gone), `agent.version_created` in the outbox once per version, and runs
 * pinned to a version on every surface (agent and thread runs, queued runs, the OpenAI-compatible
 * API through the official `openai` client). The model is the real OpenAI provider client talking
 * to test/helpers/upstream.ts; permissions and another tenant's agent as everywhere.
 */
import OpenAI from 'openai'
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.ts'
import { bindables, expectNamed, member, readOnlyToken, type Bindables, type Member } from './helpers/agents.ts'
import { insertTool } from './helpers/rows.ts'
import { startUpstream, type Upstream } from './helpers/upstream.ts'

describe('agent versions', () => {
  let t: TestApp
  let upstream: Upstream
  let alice: Member
  let bob: Member
  let carol: Member
  let own: Bindables

  beforeAll(async () => {
    upstream = await startUpstream()
    t = await createTestApp({ OPENAI_API_KEY: 'sk-upstream-test', OPENAI_BASE_URL: upstream.url, LLM_TIMEOUT_MS: '5000' })
    alice = await member(t, await t.make.user({ name: 'Alice Versions' }))
    bob = await member(t, await t.make.user({ name: 'Bob Tenant' }))
    carol = await member(t, await t.make.user({ name: 'Carol Reader' }))
    own = await bindables(t, alice)
  })
  afterAll(async () => {
    await t?.close()
    await upstream?.close()
  })
  beforeEach(() => upstream.reset())

  let made = 0
  const create = async (body: Record<string, unknown> = {}) => {
    const res = await t.http('POST', '/api/v1/agents', {
      token: alice.token,
      body: { name: `Versioned ${++made}`, instruction: 'Version one instruction.', metadata: { role: 'Helper' }, ...body },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body.data as { uuid: string; version: number }
  }
  const put = (uuid: string, body: Record<string, unknown>, token = alice.token) => t.http('PUT', `/api/v1/agents/${uuid}`, { token, body })
  const versions = async (uuid: string, query = '') => {
    const res = await t.http('GET', `/api/v1/agents/${uuid}/versions${query}`, { token: alice.token })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return res.body
  }
  const version = (uuid: string, n: number | string, token = alice.token) => t.http('GET', `/api/v1/agents/${uuid}/versions/${n}`, { token })
  /** The system prompt of the upstream request `index` (the last by default). */
  const systemOf = (index = -1) => String(upstream.requests.at(index)?.body.messages[0].content)

  it('makes version 1 on create and the next version for each change of a behaviour field, none for the rest', async () => {
    const agent = await create()
    expect(agent.version).toBe(1)
    expect((await put(agent.uuid, { instruction: 'Version two instruction.' })).body.data.version).toBe(2)
    // Visibility, categories, is_template and an unchanged value make none.
    const categories = (await t.http('GET', '/api/v1/categories', { token: alice.token })).body.data
    const quiet = await put(agent.uuid, {
      visibility: 'workspace',
      category_uuids: [categories[0].uuid],
      is_template: true,
      instruction: 'Version two instruction.',
      file: { keys: [own.media.key] },
    })
    expect(quiet.status).toBe(200)
    expect(quiet.body.data.version).toBe(2)
    await t.http('POST', `/api/v1/agents/${agent.uuid}/favorite`, { token: alice.token })
    expect((await put(agent.uuid, { tools: [{ tool_uuid: own.tool.uuid, account_uuid: own.account.uuid }] })).body.data.version).toBe(3)
    expect((await put(agent.uuid, { metadata: { role: 'Planner', memory: true }, name: 'Renamed' })).body.data.version).toBe(4)
    expect((await put(agent.uuid, { profile_photo_config: { emoji: '🧭' }, workflows: [{ workflow_uuid: own.workflow.uuid }] })).body.data.version).toBe(5)

    const list = await versions(agent.uuid)
    expect(list.meta.total).toBe(5)
    expect(list.data.map((v: { version: number; changed: string[] }) => [v.version, v.changed])).toEqual([
      [5, ['profile_photo_config', 'workflows']],
      [4, ['name', 'metadata']],
      [3, ['tools']],
      [2, ['instruction']],
      [1, []],
    ])
    expect(list.data[0]).toEqual({
      version: 5,
      created_at: expect.stringMatching(/Z$/),
      created_by: { id: alice.id, name: 'Alice Versions' },
      note: null,
      changed: ['profile_photo_config', 'workflows'],
    })
    const oldest = await versions(agent.uuid, '?sort=version&per_page=2&page=1')
    expect(oldest.data.map((v: { version: number }) => v.version)).toEqual([1, 2])
    expect(oldest.meta).toMatchObject({ total: 5, per_page: 2, last_page: 3 })

    // Each version made one agent.version_created event, in the agent's workspace.
    const events = await t.sql(`select type, data, workspace_id::float8 as ws from outbox_events where data->>'agent_uuid' = ? order by id`, [agent.uuid])
    expect(events.map((e) => [e.type, (e.data as { version: number }).version, e.ws])).toEqual(
      [1, 2, 3, 4, 5].map((n) => ['agent.version_created', n, alice.wsId]),
    )
  })

  it('answers one version with its snapshot, and a note set and removed by PUT', async () => {
    const agent = await create({
      description: 'First description',
      tools: [{ tool_uuid: own.tool.uuid, account_uuid: own.account.uuid }, { tool_uuid: own.plainTool.uuid }],
      workflows: [{ workflow_uuid: own.workflow.uuid }],
      profile_photo_config: { emoji: '🐙', background_color: '#000000' },
    })
    await put(agent.uuid, { instruction: 'Changed.', metadata: { role: null } })
    const first = await version(agent.uuid, 1)
    expect(first.status).toBe(200)
    expect(first.body.data).toEqual({
      version: 1,
      created_at: expect.any(String),
      created_by: { id: alice.id, name: 'Alice Versions' },
      note: null,
      changed: [],
      snapshot: {
        name: `Versioned ${made}`,
        description: 'First description',
        instruction: 'Version one instruction.',
        metadata: { role: 'Helper' },
        profile_photo_config: { emoji: '🐙', background_color: '#000000' },
        tools: [
          { tool_uuid: own.tool.uuid, account_uuid: own.account.uuid },
          { tool_uuid: own.plainTool.uuid, account_uuid: null },
        ],
        workflows: [{ workflow_uuid: own.workflow.uuid }],
      },
    })
    expect((await version(agent.uuid, 2)).body.data).toMatchObject({ changed: ['instruction', 'metadata'], snapshot: { instruction: 'Changed.', metadata: {} } })

    const noted = await t.http('PUT', `/api/v1/agents/${agent.uuid}/versions/2`, { token: alice.token, body: { note: 'Shorter answers' } })
    expect(noted.status).toBe(200)
    expect(noted.body.data).toEqual({ ...(await version(agent.uuid, 2)).body.data, snapshot: undefined, note: 'Shorter answers' })
    expect(Object.keys(noted.body.data)).not.toContain('snapshot')
    const cleared = await t.http('PUT', `/api/v1/agents/${agent.uuid}/versions/2`, { token: alice.token, body: { note: null } })
    expect(cleared.body.data.note).toBeNull()
    // A note is not a change of the agent: no version.
    expect((await versions(agent.uuid)).meta.total).toBe(2)
  })

  it('refuses bad version numbers and notes: 404 for a version the agent lacks, 400 naming the field otherwise', async () => {
    const agent = await create()
    expect((await version(agent.uuid, 2)).status).toBe(404)
    expectNamed(await version(agent.uuid, 0), 'version')
    expectNamed(await version(agent.uuid, 'latest'), 'version')
    expectNamed(await version(agent.uuid, '1.5'), 'version')
    const note = (body: unknown, n = 1) => t.http('PUT', `/api/v1/agents/${agent.uuid}/versions/${n}`, { token: alice.token, body })
    expectNamed(await note({ note: 'x'.repeat(2_001) }), 'note')
    expectNamed(await note({ note: 7 }), 'note')
    expectNamed(await note({}), 'note')
    expect((await note({ note: 'ok' }, 9)).status).toBe(404)
    expect((await t.http('POST', `/api/v1/agents/${agent.uuid}/versions/9/restore`, { token: alice.token })).status).toBe(404)
    expectNamed(await t.http('POST', `/api/v1/agents/${agent.uuid}/versions/-1/restore`, { token: alice.token }), 'version')
    expect((await versions(agent.uuid)).data[0].note).toBeNull()
  })

  it('restores a version: the snapshot becomes the agent (metadata replaced), recorded as a new version with its note', async () => {
    const agent = await create({ tools: [{ tool_uuid: own.plainTool.uuid }] })
    await put(agent.uuid, { instruction: 'A bad instruction.', metadata: { team: 'red', memory: true }, tools: [], description: 'Drifted' })
    const restored = await t.http('POST', `/api/v1/agents/${agent.uuid}/versions/1/restore`, { token: alice.token })
    expect(restored.status, JSON.stringify(restored.body)).toBe(200)
    expect(restored.body.data).toMatchObject({
      version: 3,
      instruction: 'Version one instruction.',
      description: '',
      metadata: { role: 'Helper' },
      tools: [expect.objectContaining({ uuid: own.plainTool.uuid })],
    })
    expect(Object.keys(restored.body.data.metadata)).toEqual(['role'])
    const latest = (await versions(agent.uuid)).data[0]
    expect(latest).toMatchObject({ version: 3, note: 'restored from version 1', changed: ['description', 'instruction', 'metadata', 'tools'] })
    expect((await version(agent.uuid, 3)).body.data.snapshot).toEqual((await version(agent.uuid, 1)).body.data.snapshot)
    // Restoring what the agent already is changes nothing and makes no version.
    const again = await t.http('POST', `/api/v1/agents/${agent.uuid}/versions/3/restore`, { token: alice.token })
    expect(again.status).toBe(200)
    expect(again.body.data.version).toBe(3)
  })

  it('refuses a restore whose tool or workflow the caller can no longer use, naming snapshot.tools.<i>, and changes nothing', async () => {
    const doomed = await insertTool(t, { userId: alice.id, workspaceId: alice.wsId, name: 'Soon gone' })
    const agent = await create({ tools: [{ tool_uuid: own.plainTool.uuid }, { tool_uuid: doomed.uuid }] })
    await put(agent.uuid, { tools: [], instruction: 'Second.' })
    expect((await t.http('DELETE', `/api/v1/tools/${doomed.uuid}`, { token: alice.token })).status).toBe(204)
    const before = (await t.http('GET', `/api/v1/agents/${agent.uuid}`, { token: alice.token })).body.data
    const res = await t.http('POST', `/api/v1/agents/${agent.uuid}/versions/1/restore`, { token: alice.token })
    expectNamed(res, 'snapshot.tools.1')
    const after = (await t.http('GET', `/api/v1/agents/${agent.uuid}`, { token: alice.token })).body.data
    expect(after).toEqual(before)
    expect((await versions(agent.uuid)).meta.total).toBe(2)
  })

  it('lets a read share read versions but not annotate or restore them; another tenant gets 404, no token 401', async () => {
    const agent = await create()
    await put(agent.uuid, { instruction: 'Second.' })
    const shared = await t.http('POST', `/api/v1/agents/${agent.uuid}/share`, {
      token: alice.token,
      body: { entity_type: 'user', entity_id: carol.id, permission: 'read' },
    })
    expect(shared.status, JSON.stringify(shared.body)).toBe(200)
    expect((await t.http('GET', `/api/v1/agents/${agent.uuid}/versions`, { token: carol.token })).body.meta.total).toBe(2)
    expect((await version(agent.uuid, 1, carol.token)).status).toBe(200)
    expect((await t.http('PUT', `/api/v1/agents/${agent.uuid}/versions/1`, { token: carol.token, body: { note: 'mine' } })).status).toBe(403)
    expect((await t.http('POST', `/api/v1/agents/${agent.uuid}/versions/1/restore`, { token: carol.token })).status).toBe(403)
    const readOnly = await readOnlyToken(t, alice)
    expect((await t.http('GET', `/api/v1/agents/${agent.uuid}/versions`, { token: readOnly.token })).status).toBe(200)
    expect((await t.http('PUT', `/api/v1/agents/${agent.uuid}/versions/1`, { token: readOnly.token, body: { note: 'x' } })).status).toBe(403)
    expect((await t.http('POST', `/api/v1/agents/${agent.uuid}/versions/1/restore`, { token: readOnly.token })).status).toBe(403)
    for (const res of [
      await t.http('GET', `/api/v1/agents/${agent.uuid}/versions`, { token: bob.token }),
      await version(agent.uuid, 1, bob.token),
      await t.http('PUT', `/api/v1/agents/${agent.uuid}/versions/1`, { token: bob.token, body: { note: 'x' } }),
      await t.http('POST', `/api/v1/agents/${agent.uuid}/versions/1/restore`, { token: bob.token }),
    ]) {
      expect(res.status).toBe(404)
      expect(JSON.stringify(res.body)).not.toContain('Second.')
    }
    expect((await t.http('GET', `/api/v1/agents/${agent.uuid}/versions`)).status).toBe(401)
    expect((await t.http('POST', `/api/v1/agents/${agent.uuid}/versions/1/restore`)).status).toBe(401)
    expect((await versions(agent.uuid)).data.map((v: { note: string | null }) => v.note)).toEqual([null, null])
  })

  it('pins agent and thread runs to a version: its instruction, metadata and tools; records agent_version on the run and its answer', async () => {
    const agent = await create({ metadata: { role: 'Version one role' } })
    await put(agent.uuid, { instruction: 'Version two instruction.', metadata: { role: 'Version two role' }, tools: [{ tool_uuid: own.plainTool.uuid }] })
    const pinned = await t.http('POST', `/api/v1/agents/${agent.uuid}/run`, { token: alice.token, body: { input: 'Hello', version: 1 } })
    expect(pinned.status, JSON.stringify(pinned.body)).toBe(200)
    expect(pinned.body.data.run.agent_version).toBe(1)
    expect(systemOf()).toContain('Version one instruction.')
    expect(systemOf()).toContain('Version one role')
    expect(upstream.requests.at(-1)?.body.tools).toBeUndefined()
    const answer = pinned.body.data.messages.find((m: { role: string }) => m.role === 'assistant')
    expect(answer.agent_version).toBe(1)
    expect(pinned.body.data.messages.find((m: { role: string }) => m.role === 'user').agent_version).toBeNull()

    const current = await t.http('POST', `/api/v1/threads/${pinned.body.data.run.thread_uuid}/run`, { token: alice.token, body: { content: 'Again' } })
    expect(current.status).toBe(200)
    expect(current.body.data.run.agent_version).toBe(2)
    expect(systemOf()).toContain('Version two instruction.')
    expect(upstream.requests.at(-1)?.body.tools?.length).toBe(1)
    const threadPinned = await t.http('POST', `/api/v1/threads/${pinned.body.data.run.thread_uuid}/run`, { token: alice.token, body: { content: 'Once more', version: 1 } })
    expect(threadPinned.body.data.run.agent_version).toBe(1)
    expect(systemOf()).toContain('Version one instruction.')
    const stored = await t.http('GET', `/api/v1/runs/${threadPinned.body.data.run.uuid}`, { token: alice.token })
    expect(stored.body.data.run.agent_version).toBe(1)
    const messages = await t.http('GET', `/api/v1/messages?thread_uuid=${pinned.body.data.run.thread_uuid}`, { token: alice.token })
    expect(messages.status).toBe(200)
    expect(messages.body.data.filter((m: { role: string }) => m.role === 'assistant').map((m: { agent_version: number }) => m.agent_version).sort()).toEqual([1, 1, 2])

    const requests = upstream.requests.length
    for (const bad of [3, 0, -1, 1.5, '1']) {
      expectNamed(await t.http('POST', `/api/v1/agents/${agent.uuid}/run`, { token: alice.token, body: { input: 'Hi', version: bad } }), 'version')
    }
    expectNamed(await t.http('POST', `/api/v1/threads/${pinned.body.data.run.thread_uuid}/run`, { token: alice.token, body: { content: 'Hi', version: 9 } }), 'version')
    expect(upstream.requests.length).toBe(requests)
  })

  it('runs a queued run with the version current when it starts, unless it was pinned', async () => {
    const agent = await create()
    // The first run holds the thread for 3 s: the two runs queued behind it and the edit all come
    // before it ends, even on a loaded machine (800 ms was not enough there).
    upstream.enqueue({ kind: 'slow', delayMs: 3_000 })
    const first = await t.http('POST', `/api/v1/agents/${agent.uuid}/run`, { token: alice.token, body: { input: 'Slow one', background: true } })
    expect(first.status).toBe(202)
    const thread = first.body.data.run.thread_uuid
    const queued = await t.http('POST', `/api/v1/threads/${thread}/run`, { token: alice.token, body: { content: 'Next', background: true } })
    const queuedPinned = await t.http('POST', `/api/v1/threads/${thread}/run`, { token: alice.token, body: { content: 'Pinned', background: true, version: 1 } })
    expect(queued.body.data.run).toMatchObject({ status: 'queued', agent_version: null })
    expect(queuedPinned.body.data.run).toMatchObject({ status: 'queued', agent_version: 1 })
    await put(agent.uuid, { instruction: 'Edited while queued.' })
    const ended = async (uuid: string) => {
      for (let i = 0; i < 400; i += 1) {
        const res = await t.http('GET', `/api/v1/runs/${uuid}`, { token: alice.token })
        if (res.body.data.run.status === 'succeeded') return res.body.data.run
        await new Promise((resolve) => setTimeout(resolve, 50))
      }
      throw new Error(`run ${uuid} did not end`)
    }
    expect((await ended(queued.body.data.run.uuid)).agent_version).toBe(2)
    expect((await ended(queuedPinned.body.data.run.uuid)).agent_version).toBe(1)
    const systems = upstream.requests.map((r) => String(r.body.messages[0].content))
    expect(systems[1]).toContain('Edited while queued.')
    expect(systems[2]).toContain('Version one instruction.')
  })

  it('pins a version through the OpenAI-compatible API as <uuid>@<version>; a version the agent lacks is model_not_found', async () => {
    const agent = await create()
    await put(agent.uuid, { instruction: 'Version two instruction.' })
    const sdk = new OpenAI({ baseURL: `${t.url}/api/v1/openai`, apiKey: alice.token, maxRetries: 0 })
    const completion = await sdk.chat.completions.create({ model: `${agent.uuid}@1`, messages: [{ role: 'user', content: 'Hello' }] })
    expect(completion.model).toBe(`${agent.uuid}@1`)
    expect(systemOf()).toContain('Version one instruction.')
    const response = await sdk.responses.create({ model: agent.uuid, input: 'Hi' })
    expect(response.model).toBe(agent.uuid)
    expect(systemOf()).toContain('Version two instruction.')
    const missing = await sdk.chat.completions.create({ model: `${agent.uuid}@3`, messages: [{ role: 'user', content: 'Hello' }] }).catch((error: unknown) => error)
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError)
    expect((missing as InstanceType<typeof OpenAI.NotFoundError>).code).toBe('model_not_found')
    const models = await sdk.models.list()
    expect(models.data.map((m) => m.id)).toContain(agent.uuid)
    expect(models.data.some((m) => m.id.includes('@'))).toBe(false)
  })
})
