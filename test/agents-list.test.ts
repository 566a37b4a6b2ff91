/**
 * Listing agents (`GET /api/v1/agents`; specification: "Resource-specific filters", Agents;
 * docs/api/conventions.md and docs/api/tenancy.md): the list rule, every filter, sorting, the paginator, `with`, and the
 * number of SQL statements a list and a single read send.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { createTestApp, type HttpResult, type TestApp } from './helpers/app.ts'
import { AGENT_KEYS, AGENT_LIST_KEYS, bindables, countRequestQueries, expectNamed, makeAgent, member, type Member } from './helpers/agents.ts'
import { insertAccount, insertTool, insertWorkflow } from './helpers/rows.ts'
import { expectStatus } from './helpers/expect.ts'

describe('agents lists', () => {
  let t: TestApp
  let alice: Member
  /** Another tenant. */
  let bob: Member
  let categories: { uuid: string }[]
  const http = (...args: Parameters<TestApp['http']>) => t.http(...args)
  const agent = (user: { token: string }, input: Record<string, unknown> = {}) => makeAgent(t, user, input)

  beforeAll(async () => {
    t = await createTestApp()
    alice = await member(t, await t.make.user({ name: 'Alice Liddell' }))
    bob = await member(t, await t.make.user({ name: 'Bob Other' }))
    categories = (await http('GET', '/api/v1/categories', { token: alice.token })).body.data
  })
  afterAll(async () => t?.close())

  describe('agents.list (GET /api/v1/agents)', () => {
    /** A fresh tenant with a known set of agents. */
    let erin: Member
    let frank: Member
    let team: { uuid: string }
    const names = (res: HttpResult) => res.body.data.map((a: { name: string }) => a.name)
    /** Lists as `user`, in erin's workspace unless the query names another. */
    const list = (query = '', user: { token: string } = erin) =>
      http('GET', `/api/v1/agents${query}`, {
        token: user.token,
        headers: (user === erin || user === frank) && !query.includes('workspace_uuid') ? { 'X-Workspace-UUID': erin.workspaceUuid } : {},
      })

    beforeAll(async () => {
      erin = await member(t, await t.make.user({ name: 'Erin Lister' }))
      frank = await member(t, await t.make.user({ name: 'Frank Teammate' }))
      await t.make.member(erin.workspaceUuid, erin, frank, 'member')
      team = await t.make.workspace(erin, { name: 'Erin side project' })
      const stuff = await bindables(t, erin)
      const cat = (i: number) => categories[i].uuid
      await agent(erin, { name: 'Alpha Writer', description: 'Drafts blog posts', visibility: 'private', category_uuids: [cat(1)] })
      await agent(erin, { name: 'beta Researcher', description: 'Finds PAPERS', visibility: 'workspace', is_template: true, category_uuids: [cat(7)] })
      await agent(erin, {
        name: 'Gamma Support',
        description: '100% helpful_bot',
        visibility: 'public',
        tools: [{ tool_uuid: stuff.tool.uuid, account_uuid: stuff.account.uuid }],
        workflows: [{ workflow_uuid: stuff.workflow.uuid }],
        category_uuids: [cat(1), cat(4)],
      })
      await agent(frank, { name: 'Delta Frank', visibility: 'workspace', workspace_uuid: erin.workspaceUuid })
      await agent(frank, { name: 'Epsilon Frank private', visibility: 'private', workspace_uuid: erin.workspaceUuid })
      await agent(erin, { name: 'Zeta Side', visibility: 'workspace', workspace_uuid: team.uuid })
      await t.sql(`update agents set usage_count = 5 where name = 'beta Researcher'`)
      await t.sql(`update agents set usage_count = 9 where name = 'Alpha Writer'`)
    })

    it('answers the paginator shape, newest first, only agents of the workspace context the caller may see', async () => {
      const res = await list()
      expect(res.status).toBe(200)
      expect(Object.keys(res.body).sort()).toEqual(['data', 'links', 'meta'])
      // Workspace owner: sees frank's private one too (docs/api/tenancy.md: owner/admin hold every permission).
      expect(names(res)).toEqual(['Epsilon Frank private', 'Delta Frank', 'Gamma Support', 'beta Researcher', 'Alpha Writer'])
      expect(res.body.meta).toMatchObject({ current_page: 1, from: 1, to: 5, total: 5, per_page: 15, last_page: 1 })
      for (const a of res.body.data) {
        expect(Object.keys(a).sort()).toEqual(AGENT_LIST_KEYS)
        expect(a.user).toBeNull()
        expect(a.workspace).toBeNull()
      }
      // Frank, a member: his own two and erin's workspace-visible and public ones.
      expect(names(await list('', frank))).toEqual(['Epsilon Frank private', 'Delta Frank', 'Gamma Support', 'beta Researcher'])
      // Another workspace context.
      expect(names(await list(`?workspace_uuid=${team.uuid}`))).toEqual(['Zeta Side'])
      expect(names(await list('', bob))).not.toContain('Gamma Support')
    })

    it('filters by user_id, search (name and description, case-insensitive, % and _ literal), visibility, category_uuids, template, favorite', async () => {
      expect(names(await list(`?user_id=${frank.id}`))).toEqual(['Epsilon Frank private', 'Delta Frank'])
      expect(names(await list('?search=BETA'))).toEqual(['beta Researcher'])
      expect(names(await list('?search=papers'))).toEqual(['beta Researcher'])
      expect(names(await list('?search=100%25'))).toEqual(['Gamma Support'])
      expect(names(await list('?search=p_bot'))).toEqual([])
      expect(names(await list('?search=l_b'))).toEqual(['Gamma Support'])
      expect(names(await list('?visibility=workspace'))).toEqual(['Delta Frank', 'beta Researcher'])
      expect(names(await list('?visibility=public'))).toContain('Gamma Support')
      expect(names(await list('?visibility=public', bob))).toContain('Gamma Support')
      expect(names(await list(`?category_uuids=${categories[1].uuid}`))).toEqual(['Gamma Support', 'Alpha Writer'])
      expect(names(await list(`?category_uuids=${categories[4].uuid},${categories[7].uuid}`))).toEqual(['Gamma Support', 'beta Researcher'])
      expect(names(await list(`?category_uuids=${categories[4].uuid}&category_uuids=${categories[7].uuid}`))).toEqual([
        'Gamma Support',
        'beta Researcher',
      ])
      expect(names(await list('?template=true'))).toEqual(['beta Researcher'])
      expect(names(await list('?template=1'))).toEqual(['beta Researcher'])
      expect(names(await list('?template=false'))).toHaveLength(5)
      expect(names(await list('?favorite=true'))).toEqual([])
      const [gamma] = (await list('?search=gamma')).body.data
      await http('POST', `/api/v1/agents/${gamma.uuid}/favorite`, { token: erin.token })
      expect(names(await list('?favorite=true'))).toEqual(['Gamma Support'])
      expect(names(await list('?favorite=1&visibility=public'))).toEqual(['Gamma Support'])
      expect(names(await list('?favorite=true', frank))).toEqual([])
      const viaCaller = await t.as(erin).agents.list({ category_uuids: [categories[7].uuid], favorite: false, template: true })
      expect(viaCaller.data.map((a) => a.name)).toEqual(['beta Researcher'])
    })

    it('sorts by created_at, name, updated_at and usage_count, each both ways; paginates with links', async () => {
      expect(names(await list('?sort=name'))).toEqual(['Alpha Writer', 'beta Researcher', 'Delta Frank', 'Epsilon Frank private', 'Gamma Support'])
      expect(names(await list('?sort=-name'))[0]).toBe('Gamma Support')
      expect(names(await list('?sort=created_at'))[0]).toBe('Alpha Writer')
      expect(names(await list('?sort=-usage_count')).slice(0, 2)).toEqual(['Alpha Writer', 'beta Researcher'])
      expect(names(await list('?sort=usage_count')).at(-1)).toBe('Alpha Writer')
      expect((await list('?sort=updated_at')).status).toBe(200)
      expect((await list('?sort=-updated_at')).status).toBe(200)
      const second = await list('?sort=name&per_page=2&page=2')
      expect(names(second)).toEqual(['Delta Frank', 'Epsilon Frank private'])
      expect(second.body.meta).toMatchObject({ current_page: 2, from: 3, to: 4, total: 5, last_page: 3, per_page: 2 })
      expect(second.body.links.next).toContain('page=3')
      expect(second.body.links.prev).toContain('page=1')
      expect(second.body.links.first).toContain('sort=name')
    })

    it('embeds exactly what `with` asks for', async () => {
      const res = await list('?search=gamma&with=user,workspace,tools,workflows,shares,categories,files')
      const [a] = res.body.data
      expect(Object.keys(a).sort()).toEqual(AGENT_KEYS)
      expect(a.user.id).toBe(erin.id)
      expect(a.workspace.uuid).toBe(erin.workspaceUuid)
      expect(a.tools).toHaveLength(1)
      expect(a.tools[0].pivot_account).not.toBeNull()
      expect(a.workflows).toHaveLength(1)
      expect(a.categories).toHaveLength(2)
      expect(a.files).toEqual([])
      expect(a.shares).toEqual([])
      const some = (await list('?search=gamma&with=tools')).body.data[0]
      expect(Object.keys(some).sort()).toEqual([...AGENT_LIST_KEYS, 'tools'].sort())
      expect(some.user).toBeNull()
    })

    it('embeds tools and workflows that several agents share as each single read does: in order, live ones only, each link with its own account', async () => {
      // The list reads each distinct tool, account and workflow of a page once and gives every
      // agent its links' copies (src/agents/agent-list.service.ts); the single read builds
      // each agent's own. Both must answer the same agents.
      const hana = await member(t, await t.make.user({ name: 'Hana Sharer' }))
      const mine = { userId: hana.id, workspaceId: hana.wsId }
      const stuff = await bindables(t, hana)
      const second = await insertAccount(t, { ...mine, providerId: stuff.provider.id, name: 'Second key', secretHint: 'sk-…5678' })
      const doomedAccount = await insertAccount(t, { ...mine, providerId: stuff.provider.id, name: 'Doomed key' })
      const doomedTool = await insertTool(t, { ...mine, name: 'Doomed tool' })
      const otherWorkflow = await insertWorkflow(t, { ...mine, name: 'Escalate' })
      const doomedWorkflow = await insertWorkflow(t, { ...mine, name: 'Doomed workflow' })
      await agent(hana, {
        name: 'Shares one',
        tools: [{ tool_uuid: stuff.tool.uuid, account_uuid: stuff.account.uuid }, { tool_uuid: doomedTool.uuid }, { tool_uuid: stuff.plainTool.uuid }],
        workflows: [{ workflow_uuid: otherWorkflow.uuid }, { workflow_uuid: doomedWorkflow.uuid }, { workflow_uuid: stuff.workflow.uuid }],
      })
      await agent(hana, {
        name: 'Shares two',
        tools: [{ tool_uuid: stuff.plainTool.uuid }, { tool_uuid: stuff.tool.uuid, account_uuid: doomedAccount.uuid }],
        workflows: [{ workflow_uuid: stuff.workflow.uuid }, { workflow_uuid: otherWorkflow.uuid }],
      })
      await agent(hana, { name: 'Shares three', tools: [{ tool_uuid: stuff.tool.uuid, account_uuid: second.uuid }], workflows: [{ workflow_uuid: doomedWorkflow.uuid }] })
      await agent(hana, { name: 'Shares nothing' })
      await t.sql('update tools set deleted_at = now() where id = ?', [doomedTool.id])
      await t.sql('update workflows set deleted_at = now() where id = ?', [doomedWorkflow.id])
      await t.sql('update accounts set deleted_at = now() where id = ?', [doomedAccount.id])

      const all = 'user,workspace,tools,workflows,shares,categories,files'
      const listed = (await list(`?with=${all}`, hana)).body.data
      expect(listed.map((a: { name: string }) => a.name)).toEqual(['Shares nothing', 'Shares three', 'Shares two', 'Shares one'])
      for (const a of listed) {
        const single = await http('GET', `/api/v1/agents/${a.uuid}`, { token: hana.token })
        expect(a).toEqual(single.body.data)
      }
      const [nothing, three, two, one] = listed
      const summary = (a: { tools: { name: string; pivot_account: { name: string } | null }[]; workflows: { name: string }[] }) => ({
        tools: a.tools.map((x) => [x.name, x.pivot_account?.name ?? null]),
        workflows: a.workflows.map((x) => x.name),
      })
      expect(summary(one)).toEqual({ tools: [['Weather lookup', 'Production key'], ['Public holidays', null]], workflows: ['Escalate', 'Triage'] })
      expect(summary(two)).toEqual({ tools: [['Public holidays', null], ['Weather lookup', null]], workflows: ['Triage', 'Escalate'] })
      expect(summary(three)).toEqual({ tools: [['Weather lookup', 'Second key']], workflows: [] })
      expect(summary(nothing)).toEqual({ tools: [], workflows: [] })
      expect([one, two, three, nothing].map((a) => [a.tools_count, a.workflows_count])).toEqual([[2, 2], [2, 2], [1, 0], [0, 0]])
      // Without `with`, the counts come from the count sub-selects: the same numbers.
      const plain = (await list('', hana)).body.data
      expect(plain.map((a: { tools_count: number; workflows_count: number }) => [a.tools_count, a.workflows_count])).toEqual([[0, 0], [1, 0], [2, 2], [2, 2]])
      // Only one relation: the other is omitted, its count still answered.
      const toolsOnly = (await list('?with=tools&per_page=2&page=2', hana)).body.data
      expect(toolsOnly.map((a: { workflows?: unknown; workflows_count: number }) => [a.workflows, a.workflows_count])).toEqual([[undefined, 2], [undefined, 2]])
      expect(toolsOnly.map((a: { tools: { name: string }[] }) => a.tools.map((x) => x.name))).toEqual([
        ['Public holidays', 'Weather lookup'],
        ['Weather lookup', 'Public holidays'],
      ])
    })

    it('refuses invalid filters with a 400 naming them', async () => {
      const cases: [string, string][] = [
        ['?with=user,secrets', 'with.1'],
        ['?sort=price', 'sort'],
        ['?per_page=101', 'per_page'],
        ['?page=0', 'page'],
        ['?user_id=abc', 'user_id'],
        ['?visibility=everyone', 'visibility'],
        ['?category_uuids=nope', 'category_uuids'],
        ['?favorite=yes', 'favorite'],
        ['?template=maybe', 'template'],
        [`?search=${'x'.repeat(256)}`, 'search'],
        ['?workspace_uuid=nope', 'workspace_uuid'],
        ['?owner=1', 'owner'],
      ]
      for (const [query, field] of cases) expectNamed(await list(query), field)
      expectStatus(await http('GET', '/api/v1/agents'), 401, 'UNAUTHORIZED')
      expectStatus(await list(`?workspace_uuid=${bob.workspaceUuid}`), 404, 'NOT_FOUND')
    })

    it('answers in the same number of SQL statements whatever the page size and `with`: one for the list itself (page and total)', async () => {
      // Enough agents that a page of 30 is full.
      const grace = await member(t, await t.make.user({ name: 'Grace Many' }))
      const stuff = await bindables(t, grace)
      for (let i = 0; i < 30; i += 1) {
        await agent(grace, {
          name: `Many ${i}`,
          tools: [{ tool_uuid: stuff.tool.uuid, account_uuid: stuff.account.uuid }, { tool_uuid: stuff.plainTool.uuid }],
          workflows: [{ workflow_uuid: stuff.workflow.uuid }],
          file: { keys: [stuff.media.key] },
          category_uuids: [categories[i % 5].uuid],
        })
      }
      // The file trains each agent (docs/api/knowledge.md): let that background work end first, so
      // only the requests' own statements are counted.
      await vi.waitFor(
        async () => expect(await t.sql(`select uuid, status from knowledge_documents where status in ('queued', 'processing')`)).toEqual([]),
        { timeout: 60_000, interval: 200 },
      )
      const all = 'user,workspace,tools,workflows,shares,categories,files'
      const counts: Record<string, number> = {}
      for (const query of ['?per_page=1', '?per_page=30', `?per_page=1&with=${all}`, `?per_page=30&with=${all}`, `?per_page=30&with=tools,workflows&favorite=true&search=many`]) {
        let res: HttpResult | undefined
        const statements = await countRequestQueries(t, async () => {
          res = await list(query, grace)
        })
        expect(res?.status).toBe(200)
        counts[query] = statements.filter((sql) => /\bfrom agents a\b/.test(sql)).length
        counts[`${query} (all)`] = statements.length
      }
      expect(new Set(Object.entries(counts).filter(([key]) => !key.endsWith('(all)')).map(([, n]) => n))).toEqual(new Set([1]))
      const totals = Object.entries(counts).filter(([key]) => key.endsWith('(all)')).map(([, n]) => n)
      // Authentication (unless cached) and the workspace context come on top of the one.
      expect(Math.max(...totals), JSON.stringify(counts)).toBeLessThanOrEqual(3)
      const page = (await list(`?per_page=30&with=${all}`, grace)).body.data
      expect(page).toHaveLength(30)
      for (const a of page) {
        expect(a.tools).toHaveLength(2)
        expect(a.workflows).toHaveLength(1)
        expect(a.files).toHaveLength(1)
        expect(a.categories).toHaveLength(1)
      }
    }, 90_000)
  })

  describe('the single read', () => {
    it('is one SQL statement after authentication and the workspace context', async () => {
      const own = await bindables(t, alice)
      const a = await agent(alice, {
        tools: [{ tool_uuid: own.tool.uuid, account_uuid: own.account.uuid }],
        workflows: [{ workflow_uuid: own.workflow.uuid }],
      })
      await http('POST', `/api/v1/agents/${a.uuid}/share`, { token: alice.token, body: { entity_type: 'user', entity_id: bob.id, permission: 'read' } })
      let res: HttpResult | undefined
      const statements = await countRequestQueries(t, async () => {
        res = await http('GET', `/api/v1/agents/${a.uuid}`, { token: alice.token })
      })
      expect(res?.status).toBe(200)
      expect(res?.body.data.shares).toHaveLength(1)
      expect(statements.filter((sql) => /\bfrom agents a\b/.test(sql))).toHaveLength(1)
      expect(statements.length).toBeLessThanOrEqual(3)
    })
  })
})
