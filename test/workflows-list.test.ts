/**
 * `GET /api/v1/workflows` (routers/workflows.router.ts, src/workflows/workflows.query.ts): the
 * paginator and `with` of docs/api/conventions.md, the list rule of docs/api/tenancy.md, the
 * specification's filters for workflows (`workspace_uuid`, `user_id`, `search`, `visibility`,
 * `category_uuids`, `favorite`, `template`) and a constant number of SQL queries
 * whatever the page size.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { countRequestQueries } from './helpers/agents.ts'
import { expectErrorBody, expectInvalid, issuePaths, trpcError } from './helpers/expect.ts'
import { WORKFLOW_KEYS } from './helpers/workflows.ts'

/** Keys of a workflow in a list without `with`: no categories; user and workspace are null. */
const LIST_KEYS = WORKFLOW_KEYS.filter((key) => key !== 'categories')

describe('workflows.list (GET /api/v1/workflows)', () => {
  let t: TestApp
  let alice: TestUser
  let carol: TestUser
  let bob: TestUser
  let categories: { uuid: string }[]
  const names = (res: { body: { data: { name: string }[] } }) => res.body.data.map((w) => w.name)
  const list = (user: { token: string }, query = '', headers?: Record<string, string>) =>
    t.http('GET', `/api/v1/workflows${query ? `?${query}` : ''}`, { token: user.token, headers })
  const make = async (user: TestUser, input: Record<string, unknown>) =>
    (await t.as(user).workflows.create({ name: 'x', ...input })).data

  beforeAll(async () => {
    t = await createTestApp()
    alice = await t.make.user({ name: 'Alice' })
    carol = await t.make.user({ name: 'Carol' })
    bob = await t.make.user({ name: 'Bob' })
    await t.make.member(alice.workspaceUuid, alice, carol, 'member')
    categories = (await t.as(alice).categories.list({ per_page: 100 })).data
    // alice's workspace: alice's and carol's workflows; bob's workspace: bob's.
    await make(alice, { name: 'Alpha invoices', description: 'Pays suppliers', visibility: 'workspace', category_uuids: [categories[0].uuid] })
    await make(alice, { name: 'Beta onboarding', description: 'Welcomes NEW hires', visibility: 'private', is_template: true, category_uuids: [categories[1].uuid] })
    await make(alice, { name: 'Gamma 100% done', description: 'Percent_sign', visibility: 'public', category_uuids: [categories[0].uuid, categories[2].uuid] })
    await make(carol, { name: 'Delta by carol', visibility: 'workspace', workspace_uuid: alice.workspaceUuid, is_template: true })
    await make(carol, { name: 'Epsilon carol private', visibility: 'private', workspace_uuid: alice.workspaceUuid })
    await make(bob, { name: 'Zeta bob private', visibility: 'private' })
    await make(bob, { name: 'Eta bob public', visibility: 'public', is_template: true, category_uuids: [categories[0].uuid] })
  })
  afterAll(async () => t?.close())

  it('answers the paginator shape, newest first, without embeds unless asked', async () => {
    const res = await list(alice)
    expect(res.status).toBe(200)
    expect(Object.keys(res.body).sort()).toEqual(['data', 'links', 'meta'])
    // The workspace owner sees every row of her workspace, a member's private one included.
    expect(names(res)).toEqual(['Epsilon carol private', 'Delta by carol', 'Gamma 100% done', 'Beta onboarding', 'Alpha invoices'])
    expect(Object.keys(res.body.data[0]).sort()).toEqual(LIST_KEYS)
    expect(res.body.data[0]).toMatchObject({ user: null, workspace: null, is_owner: false })
    expect(res.body.meta).toEqual({
      current_page: 1,
      from: 1,
      last_page: 1,
      path: `${t.config.appUrl}/api/v1/workflows`,
      per_page: 15,
      to: 5,
      total: 5,
    })
  })

  it('embeds user, workspace and categories with `with`, and refuses an unknown relation', async () => {
    const res = await list(alice, 'with=user,workspace,categories&search=gamma')
    expect(Object.keys(res.body.data[0]).sort()).toEqual(WORKFLOW_KEYS)
    expect(res.body.data[0].user).toMatchObject({ id: alice.id, primary_workspace: null })
    expect(res.body.data[0].workspace).toMatchObject({ uuid: alice.workspaceUuid, user: null })
    expect(res.body.data[0].categories.map((c: { uuid: string }) => c.uuid)).toEqual([categories[0].uuid, categories[2].uuid])
    expectInvalid(await list(alice, 'with=owner'), 'with.0')
  })

  it('shows a member the workspace-visible rows and their own, never another member\'s private one', async () => {
    const inTeam = { 'x-workspace-uuid': alice.workspaceUuid }
    expect(names(await list(carol, '', inTeam))).toEqual(['Epsilon carol private', 'Delta by carol', 'Gamma 100% done', 'Alpha invoices'])
    // Carol's own workspace holds none of these.
    expect(names(await list(carol))).toEqual([])
  })

  it('never lists another tenant\'s rows, except public ones with visibility=public and rows shared with the caller', async () => {
    expect(names(await list(bob))).toEqual(['Eta bob public', 'Zeta bob private'])
    expect(names(await list(bob, 'visibility=public'))).toEqual(['Eta bob public', 'Gamma 100% done'])
    const beta = (await t.as(alice).workflows.list({ search: 'Beta' })).data[0]
    await t.sql(
      `insert into shares (resource_type, resource_id, entity_type, entity_id, permission, created_at, updated_at)
       select 'workflows', id, 'user', ?, 'read', now(), now() from workflows where uuid = ?`,
      [bob.id, beta.uuid],
    )
    expect(names(await list(bob))).toEqual(['Eta bob public', 'Zeta bob private', 'Beta onboarding'])
    await t.sql("delete from shares where resource_type = 'workflows'")
  })

  it('filters by visibility within the workspace', async () => {
    expect(names(await list(alice, 'visibility=private'))).toEqual(['Epsilon carol private', 'Beta onboarding'])
    expect(names(await list(alice, 'visibility=workspace'))).toEqual(['Delta by carol', 'Alpha invoices'])
    expectInvalid(await list(alice, 'visibility=everyone'), 'visibility')
  })

  it('filters by user_id (creator) and by workspace_uuid', async () => {
    expect(names(await list(alice, `user_id=${carol.id}`))).toEqual(['Epsilon carol private', 'Delta by carol'])
    expect(names(await list(alice, `workspace_uuid=${alice.workspaceUuid}&user_id=${alice.id}`))).toEqual([
      'Gamma 100% done',
      'Beta onboarding',
      'Alpha invoices',
    ])
    expectInvalid(await list(alice, 'user_id=abc'), 'user_id')
    expectInvalid(await list(alice, 'workspace_uuid=nope'), 'workspace_uuid')
    // A workspace the caller is not a member of is not a context (docs/api/tenancy.md).
    expectErrorBody(await list(alice, `workspace_uuid=${bob.workspaceUuid}`), 404, 'NOT_FOUND')
  })

  it('searches name and description, case-insensitively, with % and _ taken literally', async () => {
    expect(names(await list(alice, 'search=ALPHA'))).toEqual(['Alpha invoices'])
    expect(names(await list(alice, 'search=new%20hires'))).toEqual(['Beta onboarding'])
    expect(names(await list(alice, 'search=100%25'))).toEqual(['Gamma 100% done'])
    expect(names(await list(alice, 'search=nt_s'))).toEqual(['Gamma 100% done'])
    // As patterns these would match "Alpha invoices"; taken literally they match nothing.
    expect(names(await list(alice, 'search=a_invoices'))).toEqual([])
    expect(names(await list(alice, 'search=a%25i'))).toEqual([])
  })

  it('filters by category_uuids (any of), comma-separated, repeated, or an array from tRPC', async () => {
    const [a, b, c] = categories
    expect(names(await list(alice, `category_uuids=${a.uuid}`))).toEqual(['Gamma 100% done', 'Alpha invoices'])
    expect(names(await list(alice, `category_uuids=${b.uuid},${c.uuid}`))).toEqual(['Gamma 100% done', 'Beta onboarding'])
    expect(names(await list(alice, `category_uuids=${b.uuid}&category_uuids=${c.uuid}`))).toEqual(['Gamma 100% done', 'Beta onboarding'])
    const viaCaller = await t.as(alice).workflows.list({ category_uuids: [b.uuid] })
    expect(viaCaller.data.map((w) => w.name)).toEqual(['Beta onboarding'])
    expect(names(await list(alice, 'category_uuids=01234567-89ab-4def-8123-456789abcdef'))).toEqual([])
    expectInvalid(await list(alice, `category_uuids=${a.uuid},nope`), 'category_uuids.1')
    expect(issuePaths(await trpcError(t.as(alice).workflows.list({ category_uuids: ['x'] })))).toEqual([['category_uuids', 0]])
  })

  it('filters by template and favorite (true/1 keep only those; false/0 do not filter; other values are 400)', async () => {
    expect(names(await list(alice, 'template=true'))).toEqual(['Delta by carol', 'Beta onboarding'])
    expect(names(await list(alice, 'template=1'))).toEqual(['Delta by carol', 'Beta onboarding'])
    expect(await list(alice, 'template=false').then((r) => r.body.meta.total)).toBe(5)
    expectInvalid(await list(alice, 'template=yes'), 'template')
    const [alpha] = (await t.as(alice).workflows.list({ search: 'Alpha' })).data
    await t.as(alice).workflows.favorite({ workflow_uuid: alpha.uuid })
    const favourites = await list(alice, 'favorite=true')
    expect(names(favourites)).toEqual(['Alpha invoices'])
    expect(favourites.body.data[0].is_favorite).toBe(true)
    expect(names(await list(carol, 'favorite=1', { 'x-workspace-uuid': alice.workspaceUuid }))).toEqual([])
    expect(await list(alice, 'favorite=0').then((r) => r.body.meta.total)).toBe(5)
    expect((await t.as(alice).workflows.list({ favorite: true, template: false })).data.map((w) => w.name)).toEqual(['Alpha invoices'])
    expectInvalid(await list(alice, 'favorite=maybe'), 'favorite')
  })

  it('sorts by name, created_at and updated_at both ways, and pages', async () => {
    expect(names(await list(alice, 'sort=name'))).toEqual([
      'Alpha invoices',
      'Beta onboarding',
      'Delta by carol',
      'Epsilon carol private',
      'Gamma 100% done',
    ])
    expect(names(await list(alice, 'sort=-name&per_page=2'))).toEqual(['Gamma 100% done', 'Epsilon carol private'])
    expect(names(await list(alice, 'sort=created_at&per_page=2&page=2'))).toEqual(['Gamma 100% done', 'Delta by carol'])
    const [beta] = (await t.as(alice).workflows.list({ search: 'Beta' })).data
    await t.as(alice).workflows.update({ workflow_uuid: beta.uuid, description: 'touched' })
    expect(names(await list(alice, 'sort=-updated_at&per_page=1'))).toEqual(['Beta onboarding'])
    const page3 = await list(alice, 'sort=name&per_page=2&page=3')
    expect(names(page3)).toEqual(['Gamma 100% done'])
    expect(page3.body.links.next).toBeNull()
    expect(page3.body.links.prev).toContain('page=2')
    expect(names(await list(alice, 'page=9'))).toEqual([])
    expectInvalid(await list(alice, 'sort=trigger_count'), 'sort')
    expectInvalid(await list(alice, 'per_page=101'), 'per_page')
    expectInvalid(await list(alice, 'page=0'), 'page')
  })

  it('answers 400 for an unknown parameter and 401 without a token', async () => {
    const unknown = await list(alice, 'colour=red')
    expect(unknown.status).toBe(400)
    expect(unknown.body.issues).toEqual([expect.objectContaining({ code: 'unrecognized_keys', keys: ['colour'] })])
    expectErrorBody(await t.http('GET', '/api/v1/workflows'), 401, 'UNAUTHORIZED')
  })

  it('sends the same number of SQL queries for a page of 1 and a page of 40, with every embed', async () => {
    const owner = await t.make.user({ name: 'Counter' })
    for (let i = 0; i < 40; i += 1) {
      await make(owner, { name: `Flow ${i}`, category_uuids: [categories[i % 3].uuid], nodes: [{ id: 'a', type: 'manual_trigger' }] })
    }
    const query = 'with=user,workspace,categories&favorite=0&template=0&search=flow'
    await list(owner, query) // warm the token cache and prepared statements
    const small = await countRequestQueries(t, () => list(owner, `${query}&per_page=1`))
    const large = await countRequestQueries(t, () => list(owner, `${query}&per_page=40`))
    expect((await list(owner, `${query}&per_page=40`)).body.data).toHaveLength(40)
    expect(large.length).toBe(small.length)
    // The page, the count and the categories of the page; authentication and the workspace context besides.
    const onWorkflows = large.filter((sql) => /\bworkflows?\b|workflow_categories/.test(sql))
    expect(onWorkflows).toHaveLength(3)
    expect(large.length).toBeLessThanOrEqual(5)
  })
})
