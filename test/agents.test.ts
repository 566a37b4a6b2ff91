/**
 * Agents (routers/agents.router.ts, src/agents/agents.service.ts): create, retrieve, delete,
 * favourites; the Agent shape of the specification ("Agent (response shape)", "Agent metadata",
 * "Tool", "Workflow"), tenancy and permissions of docs/api/tenancy.md. Lists:
 * agents-list.test.ts; updates: agents-update.test.ts; shares: agents-share.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.ts'
import {
  AGENT_KEYS,
  AGENT_TOOL_KEYS,
  AGENT_WORKFLOW_KEYS,
  bindables,
  expectNamed,
  makeAgent,
  member,
  readOnlyToken,
  type Bindables,
  type Member,
} from './helpers/agents.ts'
import { expectStatus, hiddenCheck, ISO_Z, issuePaths, trpcError, USER_KEYS, UUID, WORKSPACE_KEYS } from './helpers/expect.ts'
import { agentId, insertAccount, insertProvider, insertThread, insertTool, insertWorkflow, builtinProviderId } from './helpers/rows.ts'

/** A 404 that says nothing of the hidden agent. */
const expectHidden = hiddenCheck('Agent')

describe('agents', () => {
  let t: TestApp
  /** Owner of the team workspace (her primary). */
  let alice: Member
  /** Another tenant. */
  let bob: Member
  /** A `member` of alice's workspace. */
  let carol: Member
  /** An `admin` of alice's workspace. */
  let dave: Member
  let own: Bindables
  let categories: { uuid: string; slug: string }[]
  const http = (...args: Parameters<TestApp['http']>) => t.http(...args)
  const create = (user: { token: string }, body: Record<string, unknown>) => http('POST', '/api/v1/agents', { token: user.token, body })
  const agent = (user: { token: string }, input: Record<string, unknown> = {}) => makeAgent(t, user, input)

  beforeAll(async () => {
    t = await createTestApp()
    alice = await member(t, await t.make.user({ name: 'Alice Liddell' }))
    bob = await member(t, await t.make.user({ name: 'Bob Other' }))
    carol = await member(t, await t.make.user({ name: 'Carol Member' }))
    dave = await member(t, await t.make.user({ name: 'Dave Admin' }))
    await t.make.member(alice.workspaceUuid, alice, carol, 'member')
    await t.make.member(alice.workspaceUuid, alice, dave, 'admin')
    own = await bindables(t, alice)
    categories = (await http('GET', '/api/v1/categories', { token: alice.token })).body.data
  })
  afterAll(async () => t?.close())

  describe('agents.create (POST /api/v1/agents)', () => {
    it('answers 201 with the exact Agent shape: every field, relations embedded, no secret', async () => {
      const body = {
        name: 'Support bot',
        description: 'Answers tickets',
        instruction: 'Be kind and brief.',
        visibility: 'workspace',
        profile_photo_key: own.image.key,
        profile_photo_config: { emoji: '🤖', background_color: '#ffeeaa', preference: 'emoji' },
        tools: [
          { tool_uuid: own.tool.uuid, account_uuid: own.account.uuid },
          { tool_uuid: own.plainTool.uuid, account_uuid: null },
        ],
        workflows: [{ workflow_uuid: own.workflow.uuid }],
        metadata: {
          role: 'Support agent',
          goal_statement: 'Close tickets',
          backstory: 'Ten years at the help desk',
          guardrails: 'Never promise refunds',
          base_instructions: 'Answer in English',
          conversation_starters: ['Where is my order?', 'How do I reset my password?'],
          greetings: 'Hello!',
          tone_of_voice: 'friendly',
          disc_personality: 'steady',
          openai_voice: 'alloy',
          large_language_model: 'gpt-4o-mini',
          memory: true,
          knowledge: false,
          web_search: true,
          department: 'support',
        },
        file: { keys: [own.media.key] },
        category_uuids: [categories[1].uuid, categories[0].uuid],
        is_template: true,
        with: 'tools,workflows',
      }
      const res = await create(alice, body)
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      expect(Object.keys(res.body)).toEqual(['data'])
      const a = res.body.data
      expect(Object.keys(a).sort()).toEqual(AGENT_KEYS)
      expect(a.uuid).toMatch(UUID)
      expect(a).toMatchObject({
        name: 'Support bot',
        description: 'Answers tickets',
        instruction: 'Be kind and brief.',
        visibility: 'workspace',
        profile_photo_url: `${t.config.appUrl}/api/v1/media/${own.image.key}`,
        profile_photo_config: body.profile_photo_config,
        metadata: body.metadata,
        is_owner: true,
        is_template: true,
        is_favorite: false,
        tools_count: 2,
        workflows_count: 1,
        threads_count: 0,
        usage_count: 0,
        last_used_at: null,
        usage_frequency: 'never',
        shares: [],
      })
      expect(a.created_at).toMatch(ISO_Z)
      expect(a.updated_at).toMatch(ISO_Z)
      expect(Object.keys(a.user).sort()).toEqual(USER_KEYS)
      expect(a.user).toMatchObject({ id: alice.id, name: 'Alice Liddell', primary_workspace: null })
      expect(Object.keys(a.workspace).sort()).toEqual(WORKSPACE_KEYS)
      expect(a.workspace).toMatchObject({ uuid: alice.workspaceUuid, is_owner: true, user: null })
      // Tools in the order sent, with the bound account as `pivot_account`.
      expect(a.tools.map((tool: { uuid: string }) => tool.uuid)).toEqual([own.tool.uuid, own.plainTool.uuid])
      for (const tool of a.tools) expect(Object.keys(tool).sort()).toEqual(AGENT_TOOL_KEYS)
      expect(a.tools[0]).toMatchObject({
        name: 'Weather lookup',
        type: 'api',
        credits: 0,
        is_owner: true,
        profile_photo_config: {},
        pivot_account: { uuid: own.account.uuid, name: 'Production key', secret_hint: 'sk-…1234' },
      })
      expect(Object.keys(a.tools[0].pivot_account).sort()).toEqual(['name', 'provider_uuid', 'secret_hint', 'uuid'])
      expect(a.tools[1].pivot_account).toBeNull()
      expect(a.workflows).toHaveLength(1)
      expect(Object.keys(a.workflows[0]).sort()).toEqual(AGENT_WORKFLOW_KEYS)
      expect(a.workflows[0]).toMatchObject({ uuid: own.workflow.uuid, name: 'Triage', trigger_count: 0, deleted_at: null })
      expect(a.categories.map((c: { uuid: string }) => c.uuid).sort()).toEqual([categories[0].uuid, categories[1].uuid].sort())
      expect(a.files).toEqual([
        { key: own.media.key, url: `${t.config.appUrl}/api/v1/media/${own.media.key}`, mime_type: 'application/pdf', size: 1234 },
      ])
      expect(JSON.stringify(res.body)).not.toContain('SECRET')

      const again = await http('GET', `/api/v1/agents/${a.uuid}`, { token: alice.token })
      expect(again.status).toBe(200)
      expect(again.body).toEqual(res.body)
    })

    it('defaults: private, empty texts and metadata, `{}` photo config, no photo, no bindings, not a template', async () => {
      const res = await create(alice, { name: 'Bare' })
      expect(res.status).toBe(201)
      expect(res.body.data).toMatchObject({
        name: 'Bare',
        description: '',
        instruction: '',
        visibility: 'private',
        profile_photo_url: null,
        profile_photo_config: {},
        metadata: {},
        is_template: false,
        tools: [],
        workflows: [],
        shares: [],
        categories: [],
        files: [],
        tools_count: 0,
        workflows_count: 0,
      })
    })

    it('creates in the workspace named by `workspace_uuid` (the workspace context)', async () => {
      const team = await t.make.workspace(alice, { name: 'Second team' })
      const res = await create(alice, { name: 'Elsewhere', workspace_uuid: team.uuid })
      expect(res.status).toBe(201)
      expect(res.body.data.workspace.uuid).toBe(team.uuid)
      expectStatus(await create(bob, { name: 'Intruder', workspace_uuid: team.uuid }), 404, 'NOT_FOUND')
      expect(await t.sql(`select id from agents where name = 'Intruder'`)).toEqual([])
    })

    it('refuses each invalid field with a 400 naming it', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{}, 'name'],
        [{ name: '' }, 'name'],
        [{ name: '   ' }, 'name'],
        [{ name: 'x'.repeat(256) }, 'name'],
        [{ name: 7 }, 'name'],
        [{ name: 'a', description: 'x'.repeat(2001) }, 'description'],
        [{ name: 'a', instruction: 'x'.repeat(100_001) }, 'instruction'],
        [{ name: 'a', visibility: 'everyone' }, 'visibility'],
        [{ name: 'a', profile_photo_config: { preference: 'video' } }, 'profile_photo_config.preference'],
        [{ name: 'a', profile_photo_config: { colour: 'red' } }, 'profile_photo_config'],
        [{ name: 'a', metadata: { disc_personality: 'bossy' } }, 'metadata.disc_personality'],
        [{ name: 'a', metadata: { openai_voice: 'robot' } }, 'metadata.openai_voice'],
        [{ name: 'a', metadata: { conversation_starters: Array.from({ length: 11 }, () => 'hi') } }, 'metadata.conversation_starters'],
        [{ name: 'a', metadata: { conversation_starters: 'hi' } }, 'metadata.conversation_starters'],
        [{ name: 'a', metadata: { memory: 'true' } }, 'metadata.memory'],
        [{ name: 'a', metadata: { web_search: 1 } }, 'metadata.web_search'],
        [{ name: 'a', metadata: { role: 5 } }, 'metadata.role'],
        [{ name: 'a', metadata: { department: 5 } }, 'metadata.department'],
        [{ name: 'a', metadata: { department: { nested: true } } }, 'metadata.department'],
        [{ name: 'a', metadata: { 'bad key!': 'x' } }, 'metadata.bad key!'],
        [{ name: 'a', metadata: { a: 'x'.repeat(10_000), b: 'x'.repeat(10_000), c: 'x'.repeat(10_000), d: 'x'.repeat(10_000), e: 'x'.repeat(10_000), f: 'x'.repeat(10_000), g: 'x'.repeat(10_000) } }, 'metadata'],
        [{ name: 'a', tools: [{ tool_uuid: 'nope' }] }, 'tools.0.tool_uuid'],
        [{ name: 'a', tools: [{ tool_uuid: own.tool.uuid, extra: 1 }] }, 'tools.0'],
        [{ name: 'a', tools: [{ tool_uuid: own.plainTool.uuid }, { tool_uuid: own.plainTool.uuid }] }, 'tools.1.tool_uuid'],
        [{ name: 'a', tools: Array.from({ length: 51 }, () => ({ tool_uuid: own.plainTool.uuid })) }, 'tools'],
        [{ name: 'a', workflows: [{ workflow_uuid: own.workflow.uuid }, { workflow_uuid: own.workflow.uuid.toUpperCase() }] }, 'workflows.1.workflow_uuid'],
        [{ name: 'a', workflows: {} }, 'workflows'],
        [{ name: 'a', file: { keys: 'x' } }, 'file.keys'],
        [{ name: 'a', file: {} }, 'file.keys'],
        [{ name: 'a', file: { keys: [own.media.key, own.media.key] } }, 'file.keys.1'],
        [{ name: 'a', category_uuids: ['nope'] }, 'category_uuids.0'],
        [{ name: 'a', is_template: 'true' }, 'is_template'],
        [{ name: 'a', with: 'tools,secrets' }, 'with.1'],
        [{ name: 'a', owner_id: 1 }, 'owner_id'],
      ]
      for (const [body, field] of cases) expectNamed(await create(alice, body), field)
      const [count] = await t.sql('select count(*)::int as n from agents where name = ?', ['a'])
      expect(count.n).toBe(0)
    })

    it('refuses tools, accounts, workflows, files and categories the caller cannot use, naming the field, and creates nothing', async () => {
      const other = await bindables(t, bob)
      const builtin = await builtinProviderId(t, 'openai')
      const mine = { userId: alice.id, workspaceId: alice.wsId }
      const otherProvider = await insertProvider(t, { ...mine, name: 'Other API' })
      const otherProviderAccount = await insertAccount(t, { ...mine, providerId: otherProvider.id })
      const openaiTool = await insertTool(t, { ...mine, providerId: builtin })
      const openlyTool = await insertTool(t, { ...mine, providerId: (await insertProvider(t, { ...mine, authScheme: 'none' })).id })
      const deletedTool = await insertTool(t, mine)
      await t.sql('update tools set deleted_at = now() where id = ?', [deletedTool.id])
      const before = await t.sql('select count(*)::int as n from agents')
      const cases: [Record<string, unknown>, string, string][] = [
        [{ tools: [{ tool_uuid: other.tool.uuid, account_uuid: other.account.uuid }] }, 'tools.0.tool_uuid', 'No tool you can use has this uuid'],
        [{ tools: [{ tool_uuid: crypto.randomUUID() }] }, 'tools.0.tool_uuid', 'No tool you can use has this uuid'],
        [{ tools: [{ tool_uuid: deletedTool.uuid }] }, 'tools.0.tool_uuid', 'No tool you can use has this uuid'],
        [{ tools: [{ tool_uuid: own.plainTool.uuid }, { tool_uuid: own.tool.uuid, account_uuid: other.account.uuid }] }, 'tools.1.account_uuid', 'No account you can use has this uuid'],
        [{ tools: [{ tool_uuid: own.tool.uuid, account_uuid: otherProviderAccount.uuid }] }, 'tools.0.account_uuid', "The account does not belong to the tool's provider"],
        [{ tools: [{ tool_uuid: own.plainTool.uuid, account_uuid: own.account.uuid }] }, 'tools.0.account_uuid', "The account does not belong to the tool's provider"],
        [{ tools: [{ tool_uuid: own.tool.uuid }] }, 'tools.0.account_uuid', "The tool's provider needs an account"],
        [{ workflows: [{ workflow_uuid: other.workflow.uuid }] }, 'workflows.0.workflow_uuid', 'No workflow you can use has this uuid'],
        [{ file: { keys: [other.media.key] } }, 'file.keys.0', 'No uploaded file has this key'],
        [{ profile_photo_key: own.media.key }, 'profile_photo_key', 'The file is not an image'],
        [{ profile_photo_key: other.image.key }, 'profile_photo_key', 'No uploaded file has this key'],
        [{ category_uuids: [crypto.randomUUID()] }, 'category_uuids.0', 'No category has this uuid'],
      ]
      for (const [body, field, message] of cases) {
        const res = await create(alice, { name: 'Refused', ...body })
        expectNamed(res, field)
        expect(res.body.issues[0].message).toBe(message)
        expect(JSON.stringify(res.body)).not.toContain('Weather')
      }
      expect(await t.sql('select count(*)::int as n from agents')).toEqual(before)
      // A built-in provider's tool (credentials may come from the server) and a provider without
      // authentication need no account.
      const fine = await create(alice, { name: 'Fine', tools: [{ tool_uuid: openaiTool.uuid }, { tool_uuid: openlyTool.uuid }] })
      expect(fine.status, JSON.stringify(fine.body)).toBe(201)
    })

    it('binds a workspace-visible tool, account and workflow of another member of the workspace', async () => {
      const mine = { userId: alice.id, workspaceId: alice.wsId, visibility: 'workspace' as const }
      const provider = await insertProvider(t, mine)
      const tool = await insertTool(t, { ...mine, providerId: provider.id })
      const account = await insertAccount(t, { ...mine, providerId: provider.id })
      const workflow = await insertWorkflow(t, mine)
      const res = await create(carol, {
        name: 'Carol bot',
        workspace_uuid: alice.workspaceUuid,
        tools: [{ tool_uuid: tool.uuid, account_uuid: account.uuid }],
        workflows: [{ workflow_uuid: workflow.uuid }],
      })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      expect(res.body.data.tools[0]).toMatchObject({ uuid: tool.uuid, is_owner: false, pivot_account: { uuid: account.uuid } })
      // Alice's private tool stays out of carol's reach.
      expectNamed(
        await create(carol, { name: 'No', workspace_uuid: alice.workspaceUuid, tools: [{ tool_uuid: own.plainTool.uuid }] }),
        'tools.0.tool_uuid',
      )
    })

    it('answers 401 without a token and 403 to a read-only token, creating nothing', async () => {
      expectStatus(await create({ token: '' }, { name: 'Anonymous' }), 401, 'UNAUTHORIZED')
      expectStatus(await create(await readOnlyToken(t, alice), { name: 'Read only' }), 403, 'FORBIDDEN')
      expect(await t.sql(`select id from agents where name in ('Anonymous', 'Read only')`)).toEqual([])
    })
  })

  describe('agents.retrieve (GET /api/v1/agents/{agent_uuid})', () => {
    it("answers 404 for another tenant's agent (even a workspace-visible one) and says nothing about it", async () => {
      for (const visibility of ['private', 'workspace']) {
        const hidden = await agent(alice, { name: `Secret plan ${visibility}`, visibility })
        expectHidden(await http('GET', `/api/v1/agents/${hidden.uuid}`, { token: bob.token }), hidden)
      }
      expectStatus(await http('GET', `/api/v1/agents/${crypto.randomUUID()}`, { token: alice.token }), 404, 'NOT_FOUND')
    })

    it('shows a workspace-visible agent to the members, a private one only to its owner and the workspace owner/admins', async () => {
      const shared = await agent(alice, { visibility: 'workspace' })
      const res = await http('GET', `/api/v1/agents/${shared.uuid}`, { token: carol.token, headers: { 'X-Workspace-UUID': alice.workspaceUuid } })
      expect(res.status).toBe(200)
      expect(res.body.data).toMatchObject({ is_owner: false, shares: [] })
      const mine = await agent(carol, { name: 'Carol private', visibility: 'private', workspace_uuid: alice.workspaceUuid })
      expectHidden(await http('GET', `/api/v1/agents/${mine.uuid}`, { token: bob.token }), mine)
      const asAdmin = await http('GET', `/api/v1/agents/${mine.uuid}?workspace_uuid=${alice.workspaceUuid}`, { token: dave.token })
      expect(asAdmin.status).toBe(200)
      const asOwner = await http('GET', `/api/v1/agents/${mine.uuid}`, { token: alice.token })
      expect(asOwner.status).toBe(200)
      // Carol's context must be alice's workspace for the workspace-visible one.
      expectStatus(await http('GET', `/api/v1/agents/${shared.uuid}`, { token: carol.token }), 404, 'NOT_FOUND')
    })

    it('shows a public agent to any user of the service scope', async () => {
      const open = await agent(alice, { visibility: 'public' })
      const res = await http('GET', `/api/v1/agents/${open.uuid}`, { token: bob.token })
      expect(res.status).toBe(200)
      expect(res.body.data).toMatchObject({ is_owner: false, shares: [] })
      const scoped = await t.make.user({ serviceKey: 'acme-service-key-0123456789' })
      const other = await http('GET', `/api/v1/agents/${open.uuid}`, {
        token: scoped.token,
        headers: { 'X-Service-Authorization': 'acme-service-key-0123456789' },
      })
      expectStatus(other, 404, 'NOT_FOUND')
    })

    it('counts live tools, workflows and threads; usage_count, last_used_at and usage_frequency follow the row', async () => {
      const mine = { userId: alice.id, workspaceId: alice.wsId }
      const tool = await insertTool(t, mine)
      const workflow = await insertWorkflow(t, mine)
      const a = await agent(alice, {
        tools: [{ tool_uuid: tool.uuid }, { tool_uuid: own.plainTool.uuid }],
        workflows: [{ workflow_uuid: workflow.uuid }, { workflow_uuid: own.workflow.uuid }],
      })
      const id = await agentId(t, a.uuid)
      await insertThread(t, { ...mine, agentId: id })
      const gone = await insertThread(t, { ...mine, agentId: id })
      await t.sql('update threads set deleted_at = now() where id = ?', [gone.id])
      await t.sql('update tools set deleted_at = now() where id = ?', [tool.id])
      await t.sql('update workflows set deleted_at = now() where id = ?', [workflow.id])
      await t.sql(`update agents set usage_count = 12, last_used_at = '2026-01-02T03:04:05.678Z' where id = ?`, [id])
      const res = await http('GET', `/api/v1/agents/${a.uuid}`, { token: alice.token })
      expect(res.body.data).toMatchObject({
        tools_count: 1,
        workflows_count: 1,
        threads_count: 1,
        usage_count: 12,
        last_used_at: '2026-01-02T03:04:05.678Z',
        usage_frequency: 'rarely',
      })
      expect(res.body.data.tools.map((x: { uuid: string }) => x.uuid)).toEqual([own.plainTool.uuid])
      expect(res.body.data.workflows.map((x: { uuid: string }) => x.uuid)).toEqual([own.workflow.uuid])
    })

    it('drops a deleted account from pivot_account but keeps the tool', async () => {
      const mine = { userId: alice.id, workspaceId: alice.wsId }
      const account = await insertAccount(t, { ...mine, providerId: own.provider.id })
      const a = await agent(alice, { tools: [{ tool_uuid: own.tool.uuid, account_uuid: account.uuid }] })
      await t.sql('update accounts set deleted_at = now() where id = ?', [account.id])
      const res = await http('GET', `/api/v1/agents/${a.uuid}`, { token: alice.token })
      expect(res.body.data.tools).toHaveLength(1)
      expect(res.body.data.tools[0].pivot_account).toBeNull()
    })

    it('refuses a malformed uuid, an unknown `with` and unknown query parameters, and answers 401 without a token', async () => {
      const a = await agent(alice)
      expectNamed(await http('GET', '/api/v1/agents/0123-abcd', { token: alice.token }), 'agent_uuid')
      expectNamed(await http('GET', `/api/v1/agents/${a.uuid}?with=secrets`, { token: alice.token }), 'with.0')
      expectNamed(await http('GET', `/api/v1/agents/${a.uuid}?fields=all`, { token: alice.token }), 'fields')
      expectStatus(await http('GET', `/api/v1/agents/${a.uuid}`), 401, 'UNAUTHORIZED')
    })
  })

  describe('every agent endpoint', () => {
    it('answers 401 without a token and with an unknown one, and 403 to a read-only token on each mutation', async () => {
      const a = await agent(alice)
      const routes: [string, string, unknown?][] = [
        ['GET', '/api/v1/agents'],
        ['POST', '/api/v1/agents', { name: 'x' }],
        ['GET', `/api/v1/agents/${a.uuid}`],
        ['PUT', `/api/v1/agents/${a.uuid}`, { name: 'x' }],
        ['DELETE', `/api/v1/agents/${a.uuid}`],
        ['POST', `/api/v1/agents/${a.uuid}/share`, { entity_type: 'user', entity_id: bob.id, permission: 'read' }],
        ['POST', `/api/v1/agents/${a.uuid}/favorite`],
        ['DELETE', `/api/v1/agents/${a.uuid}/favorite`],
      ]
      const readOnly = await readOnlyToken(t, alice)
      for (const [method, path, body] of routes) {
        expectStatus(await http(method, path, { body }), 401, 'UNAUTHORIZED')
        expectStatus(await http(method, path, { body, token: `wst_${'A'.repeat(43)}` }), 401, 'UNAUTHORIZED')
        const res = await http(method, path, { body, token: readOnly.token })
        if (method === 'GET') expect(res.status).toBe(200)
        else expectStatus(res, 403, 'FORBIDDEN')
      }
      const [row] = await t.sql('select name, deleted_at from agents where uuid = ?', [a.uuid])
      expect(row).toEqual({ name: a.name, deleted_at: null })
    })

    it('works through the tRPC caller: create, retrieve, favorite, unfavorite, delete', async () => {
      const caller = t.as(alice)
      const created = await caller.agents.create({ name: 'Via tRPC', metadata: { memory: true, conversation_starters: ['Hi'] } })
      expect(created.data).toMatchObject({ name: 'Via tRPC', metadata: { memory: true, conversation_starters: ['Hi'] } })
      const uuid = created.data.uuid
      expect((await caller.agents.retrieve({ agent_uuid: uuid })).data).toEqual(created.data)
      await caller.agents.favorite({ agent_uuid: uuid })
      expect((await caller.agents.retrieve({ agent_uuid: uuid })).data.is_favorite).toBe(true)
      await caller.agents.unfavorite({ agent_uuid: uuid })
      expect((await caller.agents.retrieve({ agent_uuid: uuid })).data.is_favorite).toBe(false)
      await caller.agents.delete({ agent_uuid: uuid })
      const error = await trpcError(caller.agents.retrieve({ agent_uuid: uuid }))
      expect(error.code).toBe('NOT_FOUND')
      const invalid = await trpcError(caller.agents.create({ name: 'x', metadata: { openai_voice: 'robot' as never } }))
      expect(issuePaths(invalid)).toEqual([['metadata', 'openai_voice']])
    })
  })

  describe('agents.delete (DELETE /api/v1/agents/{agent_uuid})', () => {
    it('soft-deletes with 204 for the owner; the agent is then gone from retrieve and lists', async () => {
      const a = await agent(alice, { visibility: 'workspace' })
      const res = await http('DELETE', `/api/v1/agents/${a.uuid}`, { token: alice.token })
      expect(res.status).toBe(204)
      expect(res.body).toBeNull()
      const [row] = await t.sql('select deleted_at from agents where uuid = ?', [a.uuid])
      expect(row.deleted_at).not.toBeNull()
      expectStatus(await http('GET', `/api/v1/agents/${a.uuid}`, { token: alice.token }), 404, 'NOT_FOUND')
      expectStatus(await http('DELETE', `/api/v1/agents/${a.uuid}`, { token: alice.token }), 404, 'NOT_FOUND')
      const list = await http('GET', '/api/v1/agents?per_page=100', { token: alice.token })
      expect(list.body.data.map((x: { uuid: string }) => x.uuid)).not.toContain(a.uuid)
    })

    it('lets a workspace admin delete, refuses a member who can only read (403), hides it from another tenant (404)', async () => {
      const a = await agent(alice, { visibility: 'workspace' })
      const inTeam = { 'X-Workspace-UUID': alice.workspaceUuid }
      expectStatus(await http('DELETE', `/api/v1/agents/${a.uuid}`, { token: carol.token, headers: inTeam }), 403, 'FORBIDDEN')
      expectHidden(await http('DELETE', `/api/v1/agents/${a.uuid}`, { token: bob.token }), a)
      expectStatus(await http('DELETE', `/api/v1/agents/${a.uuid}`, { token: (await readOnlyToken(t, alice)).token }), 403, 'FORBIDDEN')
      const [row] = await t.sql('select deleted_at from agents where uuid = ?', [a.uuid])
      expect(row.deleted_at).toBeNull()
      expect((await http('DELETE', `/api/v1/agents/${a.uuid}`, { token: dave.token, headers: inTeam })).status).toBe(204)
    })

    it('refuses a malformed uuid and unknown parameters with a 400 naming them, and deletes nothing', async () => {
      const a = await agent(alice)
      expectNamed(await http('DELETE', '/api/v1/agents/0123-abcd', { token: alice.token }), 'agent_uuid')
      expectNamed(await http('DELETE', `/api/v1/agents/${a.uuid}?force=1`, { token: alice.token }), 'force')
      expectNamed(await http('DELETE', `/api/v1/agents/${a.uuid}?workspace_uuid=nope`, { token: alice.token }), 'workspace_uuid')
      const [row] = await t.sql('select deleted_at from agents where uuid = ?', [a.uuid])
      expect(row.deleted_at).toBeNull()
    })
  })

  describe('agents.favorite / unfavorite (POST/DELETE /api/v1/agents/{agent_uuid}/favorite)', () => {
    it('adds (204, idempotent) and removes (204, idempotent) the caller’s favourite; is_favorite is per caller', async () => {
      const a = await agent(alice, { visibility: 'public' })
      const path = `/api/v1/agents/${a.uuid}/favorite`
      for (let i = 0; i < 2; i += 1) expect((await http('POST', path, { token: bob.token })).status).toBe(204)
      expect((await http('GET', `/api/v1/agents/${a.uuid}`, { token: bob.token })).body.data.is_favorite).toBe(true)
      expect((await http('GET', `/api/v1/agents/${a.uuid}`, { token: alice.token })).body.data.is_favorite).toBe(false)
      const rows = await t.sql(`select user_id from favorites where resource_type = 'agents' and resource_id = ?`, [await agentId(t, a.uuid)])
      expect(rows).toEqual([{ user_id: bob.id }])
      for (let i = 0; i < 2; i += 1) expect((await http('DELETE', path, { token: bob.token })).status).toBe(204)
      expect((await http('GET', `/api/v1/agents/${a.uuid}`, { token: bob.token })).body.data.is_favorite).toBe(false)
    })

    it("answers 404 for an agent the caller cannot see, 401 without a token, 403 to a read-only token", async () => {
      const a = await agent(alice)
      expectHidden(await http('POST', `/api/v1/agents/${a.uuid}/favorite`, { token: bob.token }), a)
      expectStatus(await http('POST', `/api/v1/agents/${a.uuid}/favorite`), 401, 'UNAUTHORIZED')
      expectStatus(await http('POST', `/api/v1/agents/${a.uuid}/favorite`, { token: (await readOnlyToken(t, alice)).token }), 403, 'FORBIDDEN')
      expect(await t.sql(`select id from favorites where resource_type = 'agents' and resource_id = ?`, [await agentId(t, a.uuid)])).toEqual([])
    })

    it("unfavorite answers 404 for an agent the caller cannot see, 401 without a token, 403 to a read-only token, and keeps the favourite", async () => {
      const a = await agent(alice, { name: 'Hidden favourite' })
      const path = `/api/v1/agents/${a.uuid}/favorite`
      expect((await http('POST', path, { token: alice.token })).status).toBe(204)
      // Bob favourites it while it is public, then loses sight of it.
      await http('PUT', `/api/v1/agents/${a.uuid}`, { token: alice.token, body: { visibility: 'public' } })
      expect((await http('POST', path, { token: bob.token })).status).toBe(204)
      await http('PUT', `/api/v1/agents/${a.uuid}`, { token: alice.token, body: { visibility: 'private' } })
      expectHidden(await http('DELETE', path, { token: bob.token }), a)
      expectStatus(await http('DELETE', path), 401, 'UNAUTHORIZED')
      expectStatus(await http('DELETE', path, { token: (await readOnlyToken(t, alice)).token }), 403, 'FORBIDDEN')
      const rows = await t.sql(`select user_id from favorites where resource_type = 'agents' and resource_id = ? order by user_id`, [
        await agentId(t, a.uuid),
      ])
      expect(rows).toEqual([{ user_id: alice.id }, { user_id: bob.id }])
    })

    it('refuses a malformed uuid and unknown parameters with a 400 naming them, on both verbs', async () => {
      const a = await agent(alice)
      for (const method of ['POST', 'DELETE']) {
        expectNamed(await http(method, '/api/v1/agents/0123-abcd/favorite', { token: alice.token }), 'agent_uuid')
      }
      // A DELETE's parameters come in the query, a POST's in the body.
      expectNamed(await http('DELETE', `/api/v1/agents/${a.uuid}/favorite?pin=1`, { token: alice.token }), 'pin')
      expectNamed(await http('POST', `/api/v1/agents/${a.uuid}/favorite`, { token: alice.token, body: { note: 'x' } }), 'note')
      expect(await t.sql(`select id from favorites where resource_type = 'agents' and resource_id = ?`, [await agentId(t, a.uuid)])).toEqual([])
    })
  })
})
