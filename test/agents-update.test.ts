/**
 * `PUT /api/v1/agents/{agent_uuid}` (specification: "Update an Agent"; docs/api/resources.md): the
 * specification's body, omitted fields kept, `null` clearing, `metadata` merged key by key,
 * collections replaced whole, every reference checked before one transaction, permissions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.ts'
import { AGENT_KEYS, bindables, expectNamed, member, readOnlyToken, type Bindables, type Member } from './helpers/agents.ts'
import { expectStatus } from './helpers/expect.ts'
import { agentId, insertAccount, insertMedia, insertTool, insertWorkflow } from './helpers/rows.ts'

describe('agents.update (PUT /api/v1/agents/{agent_uuid})', () => {
  let t: TestApp
  let alice: Member
  let bob: Member
  let carol: Member
  let own: Bindables
  let categories: { uuid: string }[]
  const put = (user: { token: string }, uuid: string, body: unknown, headers: Record<string, string> = {}) =>
    t.http('PUT', `/api/v1/agents/${uuid}`, { token: user.token, body, headers })
  const get = async (uuid: string, user: { token: string } = alice) => {
    const res = await t.http('GET', `/api/v1/agents/${uuid}`, { token: user.token })
    expect(res.status).toBe(200)
    return res.body.data
  }
  /** A fully bound agent of alice's. */
  const fullAgent = async (overrides: Record<string, unknown> = {}) => {
    const res = await t.http('POST', '/api/v1/agents', {
      token: alice.token,
      body: {
        name: 'Original',
        description: 'Original description',
        instruction: 'Original instruction',
        visibility: 'private',
        profile_photo_key: own.image.key,
        profile_photo_config: { emoji: '🐙', background_color: '#000000', preference: 'image' },
        tools: [{ tool_uuid: own.tool.uuid, account_uuid: own.account.uuid }],
        workflows: [{ workflow_uuid: own.workflow.uuid }],
        metadata: { role: 'Researcher', conversation_starters: ['One', 'Two'], memory: true, team: 'blue' },
        file: { keys: [own.media.key] },
        category_uuids: [categories[0].uuid],
        ...overrides,
      },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body.data
  }
  /** What an unchanged agent still answers (read by its owner). */
  const stable = (data: Record<string, unknown>) => ({ ...data, is_favorite: undefined })

  beforeAll(async () => {
    t = await createTestApp()
    alice = await member(t, await t.make.user({ name: 'Alice Owner' }))
    bob = await member(t, await t.make.user({ name: 'Bob Tenant' }))
    carol = await member(t, await t.make.user({ name: 'Carol Member' }))
    await t.make.member(alice.workspaceUuid, alice, carol, 'member')
    own = await bindables(t, alice)
    categories = (await t.http('GET', '/api/v1/categories', { token: alice.token })).body.data
  })
  afterAll(async () => t?.close())

  it("answers 200 {data: Agent} to the specification's body with every field, X-Service-Authorization present without a value", async () => {
    const a = await fullAgent()
    const mine = { userId: alice.id, workspaceId: alice.wsId }
    const tool2 = await insertTool(t, { ...mine, name: 'Calendar', providerId: own.provider.id })
    const account2 = await insertAccount(t, { ...mine, name: 'Staging key', providerId: own.provider.id, secretHint: 'sk-…9999' })
    const workflow2 = await insertWorkflow(t, { ...mine, name: 'Escalate' })
    const file2 = await insertMedia(t, { ...mine, name: 'faq.pdf' })
    const photo2 = await insertMedia(t, { ...mine, mimeType: 'image/webp', name: 'new.webp' })
    const body = {
      workspace_uuid: alice.workspaceUuid,
      name: 'Research assistant',
      description: 'Finds and summarises papers',
      instruction: 'Cite every source.',
      visibility: 'workspace',
      profile_photo_key: photo2.key,
      profile_photo_config: { emoji: '📚', background_color: '#112233', preference: 'emoji' },
      tools: [
        { tool_uuid: tool2.uuid, account_uuid: account2.uuid },
        { tool_uuid: own.tool.uuid, account_uuid: own.account.uuid },
      ],
      workflows: [{ workflow_uuid: workflow2.uuid }],
      metadata: {
        role: 'Research assistant',
        goal_statement: 'Answer with sources',
        backstory: 'A librarian',
        guardrails: 'No medical advice',
        base_instructions: 'Use British English',
        conversation_starters: ['Summarise this paper'],
        greetings: 'Hi there',
        tone_of_voice: 'formal',
        disc_personality: 'dominant',
        openai_voice: 'alloy',
        large_language_model: 'gpt-4o',
        memory: false,
        knowledge: true,
        web_search: true,
        locale: 'en-GB',
      },
      file: { keys: [file2.key] },
      with: 'tools,workflows,shares',
    }
    const res = await put(alice, a.uuid, body, { Accept: 'application/json', 'X-Service-Authorization': '' })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(Object.keys(res.body)).toEqual(['data'])
    const data = res.body.data
    expect(Object.keys(data).sort()).toEqual(AGENT_KEYS)
    expect(data).toMatchObject({
      uuid: a.uuid,
      name: body.name,
      description: body.description,
      instruction: body.instruction,
      visibility: 'workspace',
      profile_photo_url: `${t.config.appUrl}/api/v1/media/${photo2.key}`,
      profile_photo_config: body.profile_photo_config,
      // Merged: `team` was stored before and is kept.
      metadata: { ...body.metadata, team: 'blue' },
      is_owner: true,
      tools_count: 2,
      workflows_count: 1,
      shares: [],
      created_at: a.created_at,
    })
    expect(data.tools.map((x: { uuid: string; pivot_account: { uuid: string } }) => [x.uuid, x.pivot_account.uuid])).toEqual([
      [tool2.uuid, account2.uuid],
      [own.tool.uuid, own.account.uuid],
    ])
    expect(data.tools[0].pivot_account).toEqual({ uuid: account2.uuid, name: 'Staging key', provider_uuid: expect.any(String), secret_hint: 'sk-…9999' })
    expect(data.workflows.map((x: { uuid: string }) => x.uuid)).toEqual([workflow2.uuid])
    expect(data.files.map((x: { key: string }) => x.key)).toEqual([file2.key])
    // category_uuids was not sent: kept.
    expect(data.categories.map((x: { uuid: string }) => x.uuid)).toEqual([categories[0].uuid])
    expect(new Date(data.updated_at).getTime()).toBeGreaterThanOrEqual(new Date(a.updated_at).getTime())
    expect(await get(a.uuid)).toEqual(data)
  })

  it('keeps every omitted field: a PUT with only `name` changes only the name (and updated_at, and makes the next version)', async () => {
    const a = await fullAgent()
    const res = await put(alice, a.uuid, { name: 'Renamed' })
    expect(res.status).toBe(200)
    expect({ ...res.body.data, name: a.name, updated_at: a.updated_at, version: a.version }).toEqual(a)
    expect(res.body.data.version).toBe(a.version + 1)
    expect(res.body.data.name).toBe('Renamed')
    const empty = await put(alice, a.uuid, {})
    expect(empty.status).toBe(200)
    expect({ ...empty.body.data, updated_at: null }).toEqual({ ...res.body.data, updated_at: null })
  })

  it('clears with null: description and instruction to "", profile_photo_key, profile_photo_config to {}', async () => {
    const a = await fullAgent()
    const res = await put(alice, a.uuid, { description: null, instruction: null, profile_photo_key: null, profile_photo_config: null })
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({ description: '', instruction: '', profile_photo_url: null, profile_photo_config: {} })
    const [row] = await t.sql('select profile_photo_key, profile_photo_config from agents where uuid = ?', [a.uuid])
    expect(row).toEqual({ profile_photo_key: null, profile_photo_config: null })
  })

  it('refuses null where a field cannot be cleared, naming it', async () => {
    const a = await fullAgent()
    for (const field of ['name', 'visibility', 'tools', 'workflows', 'metadata', 'file', 'category_uuids', 'is_template', 'with']) {
      expectNamed(await put(alice, a.uuid, { [field]: null }), field)
    }
    expect(stable(await get(a.uuid))).toEqual(stable(a))
  })

  it('merges metadata key by key: sent keys replace, null removes, others stay; conversation_starters is replaced whole', async () => {
    const a = await fullAgent({ metadata: { role: 'Old role', conversation_starters: ['a', 'b', 'c'], memory: true, team: 'blue', floor: '3' } })
    const res = await put(alice, a.uuid, {
      metadata: { role: 'New role', conversation_starters: ['z'], memory: null, team: null, building: 'B', disc_personality: 'influential' },
    })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(res.body.data.metadata).toEqual({ role: 'New role', conversation_starters: ['z'], floor: '3', building: 'B', disc_personality: 'influential' })
    const [row] = await t.sql('select metadata from agents where uuid = ?', [a.uuid])
    expect(row.metadata).toEqual(res.body.data.metadata)
  })

  it('answers 400 naming metadata when the merge would pass 64 KiB, and keeps the stored metadata', async () => {
    const big = (prefix: string) => Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`${prefix}${i}`, 'x'.repeat(9_000)]))
    const a = await fullAgent({ metadata: big('a') })
    const res = await put(alice, a.uuid, { name: 'Should not stick', metadata: big('b') })
    expectNamed(res, 'metadata')
    expect(stable(await get(a.uuid))).toEqual(stable(a))
  })

  it('replaces tools, workflows, file.keys and category_uuids whole when sent, and [] clears each', async () => {
    const a = await fullAgent()
    const res = await put(alice, a.uuid, {
      tools: [{ tool_uuid: own.plainTool.uuid }],
      workflows: [],
      file: { keys: [] },
      category_uuids: [categories[2].uuid, categories[3].uuid],
    })
    expect(res.status).toBe(200)
    expect(res.body.data.tools.map((x: { uuid: string }) => x.uuid)).toEqual([own.plainTool.uuid])
    expect(res.body.data).toMatchObject({ workflows: [], files: [], tools_count: 1, workflows_count: 0 })
    expect(res.body.data.categories.map((x: { uuid: string }) => x.uuid).sort()).toEqual([categories[2].uuid, categories[3].uuid].sort())
    const id = await agentId(t, a.uuid)
    expect(await t.sql('select count(*)::int as n from agent_workflows where agent_id = ?', [id])).toEqual([{ n: 0 }])
    expect(await t.sql('select count(*)::int as n from agent_files where agent_id = ?', [id])).toEqual([{ n: 0 }])
    const cleared = await put(alice, a.uuid, { tools: [], category_uuids: [] })
    expect(cleared.body.data).toMatchObject({ tools: [], categories: [], tools_count: 0 })
    // Sending the same set again keeps it (replace is idempotent).
    const again = await put(alice, a.uuid, { tools: [{ tool_uuid: own.tool.uuid, account_uuid: own.account.uuid }] })
    const twice = await put(alice, a.uuid, { tools: [{ tool_uuid: own.tool.uuid, account_uuid: own.account.uuid }] })
    expect(twice.body.data.tools).toEqual(again.body.data.tools)
  })

  it('changes updated_at when only the bindings change', async () => {
    const a = await fullAgent()
    await t.sql(`update agents set updated_at = '2020-01-01T00:00:00Z' where uuid = ?`, [a.uuid])
    const res = await put(alice, a.uuid, { workflows: [] })
    expect(new Date(res.body.data.updated_at).getFullYear()).toBeGreaterThan(2020)
  })

  it('checks every reference before writing: a bad one anywhere is a 400 naming it and nothing changes', async () => {
    const a = await fullAgent()
    const other = await bindables(t, bob)
    const bodies: [Record<string, unknown>, string][] = [
      [{ name: 'Nope', tools: [{ tool_uuid: own.plainTool.uuid }, { tool_uuid: other.tool.uuid }] }, 'tools.1.tool_uuid'],
      [{ name: 'Nope', tools: [{ tool_uuid: own.tool.uuid, account_uuid: other.account.uuid }] }, 'tools.0.account_uuid'],
      [{ name: 'Nope', workflows: [{ workflow_uuid: own.workflow.uuid }, { workflow_uuid: other.workflow.uuid }] }, 'workflows.1.workflow_uuid'],
      [{ name: 'Nope', tools: [], file: { keys: [other.media.key] } }, 'file.keys.0'],
      [{ name: 'Nope', tools: [], category_uuids: [crypto.randomUUID()] }, 'category_uuids.0'],
      [{ name: 'Nope', profile_photo_key: other.image.key }, 'profile_photo_key'],
    ]
    for (const [body, field] of bodies) expectNamed(await put(alice, a.uuid, body), field)
    expect(stable(await get(a.uuid))).toEqual(stable(a))
  })

  it('runs the writes in one transaction: a failure half-way leaves the agent and every binding as they were', async () => {
    const a = await fullAgent()
    const doomed = await insertWorkflow(t, { userId: alice.id, workspaceId: alice.wsId, name: 'Doomed' })
    // A trigger that fails the workflow insert, after the agent row and the tools were written.
    await t.sql(`create or replace function agents_test_fail() returns trigger language plpgsql as $$
      begin raise exception 'simulated failure'; end $$`)
    await t.sql(`create trigger agents_test_fail before insert on agent_workflows for each row
      when (new.workflow_id = ${doomed.id}) execute function agents_test_fail()`)
    try {
      const res = await put(alice, a.uuid, {
        name: 'Half written',
        metadata: { role: 'changed' },
        tools: [{ tool_uuid: own.plainTool.uuid }],
        workflows: [{ workflow_uuid: doomed.uuid }],
      })
      expect(res.status).toBe(500)
      expect(JSON.stringify(res.body)).not.toContain('simulated')
    } finally {
      await t.sql('drop trigger agents_test_fail on agent_workflows')
    }
    expect(stable(await get(a.uuid))).toEqual(stable(a))
  })

  it('refuses each invalid field with a 400 naming it, and changes nothing', async () => {
    const a = await fullAgent()
    const cases: [Record<string, unknown>, string][] = [
      [{ name: '' }, 'name'],
      [{ name: ' \t' }, 'name'],
      [{ name: 'x'.repeat(256) }, 'name'],
      [{ description: 'x'.repeat(2001) }, 'description'],
      [{ instruction: 'x'.repeat(100_001) }, 'instruction'],
      [{ instruction: 'a\u0000b' }, 'instruction'],
      [{ visibility: 'hidden' }, 'visibility'],
      [{ profile_photo_key: '' }, 'profile_photo_key'],
      [{ profile_photo_config: { preference: 'photo' } }, 'profile_photo_config.preference'],
      [{ tools: [{ account_uuid: own.account.uuid }] }, 'tools.0.tool_uuid'],
      [{ tools: [{ tool_uuid: own.tool.uuid, account_uuid: 'nope' }] }, 'tools.0.account_uuid'],
      [{ workflows: [{ uuid: own.workflow.uuid }] }, 'workflows.0.uuid'],
      [{ metadata: { openai_voice: 'Alloy' } }, 'metadata.openai_voice'],
      [{ metadata: { knowledge: 'yes' } }, 'metadata.knowledge'],
      [{ metadata: { large_language_model: 'x'.repeat(256) } }, 'metadata.large_language_model'],
      [{ metadata: { conversation_starters: [1] } }, 'metadata.conversation_starters.0'],
      [{ metadata: { extra: ['list'] } }, 'metadata.extra'],
      [{ file: { keys: [own.media.key], names: [] } }, 'file.names'],
      [{ is_template: 1 }, 'is_template'],
      [{ with: 'everything' }, 'with.0'],
      [{ user_id: bob.id }, 'user_id'],
      [{ deleted_at: null }, 'deleted_at'],
    ]
    for (const [body, field] of cases) expectNamed(await put(alice, a.uuid, body), field)
    expectNamed(await t.http('PUT', '/api/v1/agents/0123-abcd', { token: alice.token, body: { name: 'x' } }), 'agent_uuid')
    expect(stable(await get(a.uuid))).toEqual(stable(a))
  })

  it("answers 404 for another tenant's agent, saying nothing, and leaves it unchanged", async () => {
    const a = await fullAgent({ name: 'Confidential roadmap bot', visibility: 'workspace' })
    const res = await put(bob, a.uuid, { name: 'Hijacked' })
    expectStatus(res, 404, 'NOT_FOUND')
    expect(JSON.stringify(res.body)).not.toContain('Confidential')
    expectStatus(await put(bob, a.uuid, { name: 'Hijacked', workspace_uuid: alice.workspaceUuid }), 404, 'NOT_FOUND')
    expect(stable(await get(a.uuid))).toEqual(stable(a))
  })

  it('answers 403 to a member who can only read it, 403 to a read-only token, 401 without a token; nothing changes', async () => {
    const a = await fullAgent({ visibility: 'workspace' })
    const inTeam = { 'X-Workspace-UUID': alice.workspaceUuid }
    expect((await t.http('GET', `/api/v1/agents/${a.uuid}`, { token: carol.token, headers: inTeam })).status).toBe(200)
    expectStatus(await put(carol, a.uuid, { name: 'Carol was here' }, inTeam), 403, 'FORBIDDEN')
    expectStatus(await put(await readOnlyToken(t, alice), a.uuid, { name: 'Read only' }), 403, 'FORBIDDEN')
    expectStatus(await t.http('PUT', `/api/v1/agents/${a.uuid}`, { body: { name: 'Anonymous' } }), 401, 'UNAUTHORIZED')
    expect(stable(await get(a.uuid))).toEqual(stable(a))
  })

  it('looks the agent up in the workspace context `workspace_uuid` names', async () => {
    const a = await fullAgent({ visibility: 'workspace', tools: [], workflows: [], file: { keys: [] } })
    await t.sql(`update workspace_members set role = 'admin' where user_id = ? and workspace_id = ?`, [carol.id, alice.wsId])
    try {
      // Carol's own primary workspace is the default context: there the agent is invisible.
      expectStatus(await put(carol, a.uuid, { name: 'Outside' }), 404, 'NOT_FOUND')
      const res = await put(carol, a.uuid, { name: 'Inside', workspace_uuid: alice.workspaceUuid })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.data).toMatchObject({ name: 'Inside', is_owner: false, workspace: { uuid: alice.workspaceUuid } })
    } finally {
      await t.sql(`update workspace_members set role = 'member' where user_id = ? and workspace_id = ?`, [carol.id, alice.wsId])
    }
  })

  it('works through the tRPC caller with the same rules', async () => {
    const a = await fullAgent()
    const res = await t.as(alice).agents.update({
      agent_uuid: a.uuid,
      metadata: { conversation_starters: ['From tRPC'], web_search: true, channel: 'api' },
      tools: [{ tool_uuid: own.plainTool.uuid, account_uuid: null }],
    })
    expect(res.data.metadata).toMatchObject({ conversation_starters: ['From tRPC'], web_search: true, channel: 'api', role: 'Researcher' })
    expect(res.data.tools?.map((x) => x.uuid)).toEqual([own.plainTool.uuid])
  })
})
