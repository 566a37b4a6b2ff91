/**
 * Datasets (routers/datasets.router.ts, src/evaluations/; docs/api/evaluations.md, "Datasets"):
 * create, retrieve, list, update and delete over real HTTP; the visibility, share and role rules
 * of docs/api/tenancy.md, as prompts follow them; `items_count`; the audit events. The items have
 * their own file (test/dataset-items.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type HttpResult, type TestApp, type TestUser } from './helpers/app.ts'
import { readOnlyToken } from './helpers/agents.ts'
import { ACME_KEY, dottedIssuePaths, expectInvalid, ISO, trpcError, USER_KEYS, UUID, WORKSPACE_KEYS } from './helpers/expect.ts'
import { addItems, DATASET_KEYS, expectDatasetHidden, makeDataset, numbered, shareDataset, storedState } from './helpers/datasets.ts'

describe('datasets', () => {
  let t: TestApp
  let alice: TestUser
  let bob: TestUser
  let carol: TestUser
  let dave: TestUser
  /** alice's team workspace: carol is a `member`, dave an `admin`. */
  let team: { uuid: string }
  const inTeam: Record<string, string> = {}
  const http = (...args: Parameters<TestApp['http']>) => t.http(...args)
  const get = (uuid: string, user: { token: string }, headers: Record<string, string> = {}) =>
    http('GET', `/api/v1/datasets/${uuid}`, { token: user.token, headers })
  const put = (uuid: string, user: { token: string }, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    http('PUT', `/api/v1/datasets/${uuid}`, { token: user.token, headers, body })
  const del = (uuid: string, user: { token: string }, headers: Record<string, string> = {}) =>
    http('DELETE', `/api/v1/datasets/${uuid}`, { token: user.token, headers })
  const auditOf = (uuid: string) =>
    t.sql('select action, resource_type, changes from audit_events where resource_uuid = ? order by id', [uuid])

  beforeAll(async () => {
    t = await createTestApp()
    alice = await t.make.user({ name: 'Alice Liddell' })
    bob = await t.make.user({ name: 'Bob Builder' })
    carol = await t.make.user({ name: 'Carol Member' })
    dave = await t.make.user({ name: 'Dave Admin' })
    team = await t.make.workspace(alice, { name: 'Dataset Team' })
    await t.make.member(team, alice, carol, 'member')
    await t.make.member(team, alice, dave, 'admin')
    inTeam['x-workspace-uuid'] = team.uuid
  })
  afterAll(async () => t?.close())

  describe('create (POST /api/v1/datasets)', () => {
    it('answers 201 with exactly the Dataset shape, its creator and workspace nested, and records dataset.create', async () => {
      const res = await http('POST', '/api/v1/datasets', {
        token: alice.token,
        body: { name: 'Support questions', description: 'Real tickets, answered', visibility: 'workspace' },
      })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      expect(Object.keys(res.body)).toEqual(['data'])
      const dataset = res.body.data
      expect(Object.keys(dataset).sort()).toEqual(DATASET_KEYS)
      expect(dataset).toMatchObject({
        name: 'Support questions',
        description: 'Real tickets, answered',
        visibility: 'workspace',
        is_owner: true,
        items_count: 0,
      })
      expect(dataset.uuid).toMatch(UUID)
      expect(dataset.created_at).toMatch(ISO)
      expect(dataset.updated_at).toMatch(ISO)
      expect(Object.keys(dataset.user).sort()).toEqual(USER_KEYS)
      expect(dataset.user).toMatchObject({ id: alice.id, name: 'Alice Liddell', primary_workspace: null })
      expect(Object.keys(dataset.workspace).sort()).toEqual(WORKSPACE_KEYS)
      expect(dataset.workspace).toMatchObject({ uuid: alice.workspaceUuid, is_owner: true, user: null })
      expect((await get(dataset.uuid, alice)).body.data).toEqual(dataset)
      expect(await auditOf(dataset.uuid)).toEqual([
        {
          action: 'dataset.create',
          resource_type: 'dataset',
          changes: {
            name: { from: null, to: 'Support questions' },
            description: { from: null, to: 'Real tickets, answered' },
            visibility: { from: null, to: 'workspace' },
          },
        },
      ])
    })

    it('defaults to an empty description and private; creates in the workspace context', async () => {
      const bare = await makeDataset(t, alice, { name: 'Bare' })
      expect(bare).toMatchObject({ description: '', visibility: 'private', items_count: 0 })
      expect((await makeDataset(t, alice, {}, team.uuid)).workspace.uuid).toBe(team.uuid)
      expect((await makeDataset(t, alice, { workspace_uuid: team.uuid })).workspace.uuid).toBe(team.uuid)
      // Not a member of the team: its workspace is not found.
      const res = await http('POST', '/api/v1/datasets', { token: bob.token, body: { name: 'x', workspace_uuid: team.uuid } })
      expect(res.status).toBe(404)
    })

    it.each([
      ['a missing name', {}, 'name'],
      ['a blank name', { name: '   ' }, 'name'],
      ['a name over 255 characters', { name: 'n'.repeat(256) }, 'name'],
      ['a name that is not a string', { name: 7 }, 'name'],
      ['a name with a NUL character', { name: 'a\u0000b' }, 'name'],
      ['a description over 2,000 characters', { name: 'n', description: 'd'.repeat(2001) }, 'description'],
      ['an unknown visibility', { name: 'n', visibility: 'secret' }, 'visibility'],
      ['an unknown relation in with', { name: 'n', with: 'items' }, 'with.0'],
      ['a malformed workspace_uuid', { name: 'n', workspace_uuid: 'nope' }, 'workspace_uuid'],
      ['items_count, which only the service sets', { name: 'n', items_count: 5 }, ''],
    ])('answers 400 naming the field for %s, storing nothing', async (_label, body, path) => {
      const before = await storedState(t)
      expectInvalid(await http('POST', '/api/v1/datasets', { token: alice.token, body }), path)
      expect(await storedState(t)).toEqual(before)
    })

    it('answers 401 without a token and 403 for a read-only token, creating nothing', async () => {
      const before = await storedState(t)
      expect((await http('POST', '/api/v1/datasets', { body: { name: 'Nope' } })).status).toBe(401)
      const token = (await readOnlyToken(t, alice)).token
      const res = await http('POST', '/api/v1/datasets', { token, body: { name: 'Nope' } })
      expect(res.status).toBe(403)
      expect(res.body.code).toBe('FORBIDDEN')
      expect(await storedState(t)).toEqual(before)
    })
  })

  describe('retrieve (GET /api/v1/datasets/{dataset_uuid})', () => {
    it("answers 404 for another tenant's dataset, saying nothing of it", async () => {
      const secret = await makeDataset(t, alice, { name: 'Alice Secret Dataset', description: 'Confidential cases' })
      expectDatasetHidden(await get(secret.uuid, bob), secret)
      expect(JSON.stringify((await get(secret.uuid, bob)).body)).not.toContain('Confidential')
      expectDatasetHidden(await get('0190a5e0-0000-7000-8000-000000000000', bob), secret)
    })

    it('follows visibility like prompts: workspace ones to members, private ones to the owner and workspace admins', async () => {
      const open = await makeDataset(t, alice, { visibility: 'workspace' }, team.uuid)
      const closed = await makeDataset(t, alice, { visibility: 'private', name: 'Team Private Dataset' }, team.uuid)
      const asCarol = await get(open.uuid, carol, inTeam)
      expect(asCarol.status).toBe(200)
      expect(asCarol.body.data).toMatchObject({ is_owner: false, user: { id: alice.id }, workspace: { uuid: team.uuid, is_owner: false } })
      expectDatasetHidden(await get(closed.uuid, carol, inTeam), closed)
      // Outside the team's workspace context the workspace dataset is not Carol's to see.
      expect((await get(open.uuid, carol)).status).toBe(404)
      expect((await get(closed.uuid, dave, inTeam)).status).toBe(200)
      expectDatasetHidden(await get(open.uuid, bob), open)
    })

    it('shows public datasets to any user of the service scope, not to another scope; shares to their holders', async () => {
      const pub = await makeDataset(t, alice, { visibility: 'public', name: 'Public Cases' })
      expect((await get(pub.uuid, bob)).body.data).toMatchObject({ uuid: pub.uuid, is_owner: false })
      const acme = await t.make.user({ serviceKey: ACME_KEY })
      expectDatasetHidden(await get(pub.uuid, acme, { 'x-service-authorization': ACME_KEY }), pub)
      const toBob = await makeDataset(t, alice)
      await shareDataset(t, toBob.uuid, { user: bob.id }, 'read')
      expect((await get(toBob.uuid, bob)).status).toBe(200)
      const toBobsWorkspace = await makeDataset(t, alice)
      await shareDataset(t, toBobsWorkspace.uuid, { workspace: bob.workspaceUuid }, 'read')
      expect((await get(toBobsWorkspace.uuid, bob)).status).toBe(200)
    })

    it('answers 400 naming dataset_uuid for a malformed uuid, 401 without a token; reads with a read-only token', async () => {
      expectInvalid(await get('0123-abcd', alice), 'dataset_uuid')
      const dataset = await makeDataset(t, alice)
      expect((await http('GET', `/api/v1/datasets/${dataset.uuid}`)).status).toBe(401)
      expect((await get(dataset.uuid, await readOnlyToken(t, alice))).status).toBe(200)
      expect((await t.as(alice).datasets.retrieve({ dataset_uuid: dataset.uuid })).data).toEqual(dataset)
    })
  })

  describe('list (GET /api/v1/datasets)', () => {
    let erin: TestUser
    let erinWs: string
    const names = ['Zeta cases', 'alpha cases', 'Mid 100% cases', 'Beta cases']
    beforeAll(async () => {
      erin = await t.make.user({ name: 'Erin Lister' })
      erinWs = (await t.make.workspace(erin, { name: 'Erin Lists' })).uuid
      for (const name of names) await makeDataset(t, erin, { name, description: name === 'Beta cases' ? 'About ZEBRAS' : '' }, erinWs)
    })
    const list = (query = '', user: { token: string } = erin, headers: Record<string, string> = { 'x-workspace-uuid': erinWs }) =>
      http('GET', `/api/v1/datasets${query}`, { token: user.token, headers })
    const namesOf = (res: HttpResult) => res.body.data.map((d: { name: string }) => d.name)
    const uuidsOf = (res: HttpResult) => res.body.data.map((d: { uuid: string }) => d.uuid)

    it('answers the paginator shape, newest first, with items_count, without user and workspace unless asked', async () => {
      const res = await list()
      expect(res.status).toBe(200)
      expect(Object.keys(res.body)).toEqual(['data', 'links', 'meta'])
      const path = `${t.config.appUrl}/api/v1/datasets`
      expect(res.body.meta).toEqual({ current_page: 1, from: 1, last_page: 1, path, per_page: 15, to: 4, total: 4 })
      expect(res.body.links.first).toBe(`${path}?sort=-created_at&page=1&per_page=15`)
      expect(namesOf(res)).toEqual([...names].reverse())
      for (const item of res.body.data) {
        expect(Object.keys(item).sort()).toEqual(DATASET_KEYS)
        expect(item).toMatchObject({ user: null, workspace: null, is_owner: true, items_count: 0 })
      }
      const embedded = await list('?with=user,workspace')
      expect(embedded.body.data[0].user).toMatchObject({ id: erin.id, primary_workspace: null })
      expect(embedded.body.data[0].workspace).toMatchObject({ uuid: erinWs, user: null })
    })

    it('pages, sorts (name case-insensitive, created_at, updated_at) and searches name and description', async () => {
      const asc = ['alpha cases', 'Beta cases', 'Mid 100% cases', 'Zeta cases']
      expect(namesOf(await list('?sort=name'))).toEqual(asc)
      expect(namesOf(await list('?sort=-name'))).toEqual([...asc].reverse())
      expect(namesOf(await list('?sort=created_at'))).toEqual(names)
      expect(namesOf(await list('?sort=updated_at'))).toEqual(names)
      const second = await list('?sort=name&per_page=3&page=2')
      expect(namesOf(second)).toEqual(['Zeta cases'])
      expect(second.body.meta).toMatchObject({ current_page: 2, from: 4, to: 4, last_page: 2, total: 4 })
      expect(namesOf(await list('?search=ALPHA'))).toEqual(['alpha cases'])
      expect(namesOf(await list('?search=zebras'))).toEqual(['Beta cases'])
      expect(namesOf(await list('?search=%25'))).toEqual(['Mid 100% cases'])
      expect((await list('?search=_')).body.meta.total).toBe(0)
    })

    it("lists a team's workspace datasets to its members, never others' private ones; visibility filters", async () => {
      const open = await makeDataset(t, alice, { visibility: 'workspace', name: 'Team Open Set' }, team.uuid)
      const closed = await makeDataset(t, alice, { visibility: 'private', name: 'Team Closed Set' }, team.uuid)
      const carols = await list('?per_page=100', carol, inTeam)
      expect(uuidsOf(carols)).toContain(open.uuid)
      expect(uuidsOf(carols)).not.toContain(closed.uuid)
      expect(uuidsOf(await list('?per_page=100&visibility=workspace', carol, inTeam))).toContain(open.uuid)
      expect((await list('?per_page=100&visibility=private', carol, inTeam)).body.meta.total).toBe(0)
      expect(uuidsOf(await list('?per_page=100', dave, inTeam))).toEqual(expect.arrayContaining([open.uuid, closed.uuid]))
      const bobs = await list('?per_page=100', bob, {})
      expect(JSON.stringify(bobs.body)).not.toContain('Team Open Set')
      expect(JSON.stringify(bobs.body)).not.toContain('Team Closed Set')
      const pub = await makeDataset(t, alice, { visibility: 'public', name: 'Everyone Sees This Set' })
      expect(uuidsOf(await list('?visibility=public&per_page=100', bob, {}))).toContain(pub.uuid)
      expect(uuidsOf(await list('?per_page=100', bob, {}))).not.toContain(pub.uuid)
      const shared = await makeDataset(t, alice, { name: 'Shared Into Erins List' })
      await shareDataset(t, shared.uuid, { user: erin.id }, 'read')
      expect(namesOf(await list('?search=Shared Into'))).toEqual(['Shared Into Erins List'])
    })

    it('carries each dataset items_count', async () => {
      const dataset = await makeDataset(t, erin, { name: 'Counted Set' }, erinWs)
      await addItems(t, erin, dataset.uuid, numbered(3), { 'x-workspace-uuid': erinWs })
      const listed = (await list('?search=Counted')).body.data
      expect(listed).toEqual([expect.objectContaining({ uuid: dataset.uuid, items_count: 3 })])
    })

    it.each([
      ['per_page=0', 'per_page'],
      ['per_page=101', 'per_page'],
      ['page=0', 'page'],
      ['sort=items', 'sort'],
      ['with=items', 'with'],
      ['visibility=secret', 'visibility'],
      [`search=${'s'.repeat(256)}`, 'search'],
      ['workspace_uuid=nope', 'workspace_uuid'],
      ['unknown_filter=1', ''],
    ])('answers 400 naming the parameter for %s', async (query, path) => {
      const res = await list(`?${query}`)
      expect(res.status).toBe(400)
      expect(dottedIssuePaths(res).some((p) => p === path || p.startsWith(`${path}.`))).toBe(true)
    })

    it('answers 401 without a token', async () => {
      expect((await http('GET', '/api/v1/datasets')).status).toBe(401)
    })
  })

  describe('update (PUT /api/v1/datasets/{dataset_uuid})', () => {
    it('changes only what is sent; null clears the description; records dataset.update with the fields that moved', async () => {
      const dataset = await makeDataset(t, alice, { name: 'Before', description: 'Old words' })
      const renamed = await put(dataset.uuid, alice, { name: 'After' })
      expect(renamed.status).toBe(200)
      expect(renamed.body.data).toMatchObject({ name: 'After', description: 'Old words', visibility: 'private' })
      const cleared = await put(dataset.uuid, alice, { description: null, visibility: 'workspace' })
      expect(cleared.body.data).toMatchObject({ name: 'After', description: '', visibility: 'workspace' })
      expect((await get(dataset.uuid, alice)).body.data).toEqual(cleared.body.data)
      const events = await auditOf(dataset.uuid)
      expect(events.map((e) => e.action)).toEqual(['dataset.create', 'dataset.update', 'dataset.update'])
      expect(events[2].changes).toEqual({ description: { from: 'Old words', to: '' }, visibility: { from: 'private', to: 'workspace' } })
    })

    it('needs write: a member who only reads and a read share get 403; a write share may', async () => {
      const open = await makeDataset(t, alice, { visibility: 'workspace', name: 'Team Editable' }, team.uuid)
      const before = await storedState(t)
      expect((await put(open.uuid, carol, { name: 'Carol was here' }, inTeam)).status).toBe(403)
      await shareDataset(t, open.uuid, { user: bob.id }, 'read')
      expect((await put(open.uuid, bob, { name: 'Bob was here' })).status).toBe(403)
      expect((await put(open.uuid, await readOnlyToken(t, alice), { name: 'Read-only' }, inTeam)).status).toBe(403)
      expect(await storedState(t)).toEqual(before)
      const viaShare = await makeDataset(t, alice)
      await shareDataset(t, viaShare.uuid, { user: bob.id }, 'write')
      expect((await put(viaShare.uuid, bob, { name: 'Bob may' })).body.data).toMatchObject({ name: 'Bob may', is_owner: false })
    })

    it("answers 404 for another tenant's dataset and changes nothing; 400 naming the field", async () => {
      const secret = await makeDataset(t, alice, { name: 'Not Bobs To Rename' })
      const before = await storedState(t)
      expectDatasetHidden(await put(secret.uuid, bob, { name: 'Mine now' }), secret)
      for (const [body, path] of [
        [{ name: '' }, 'name'],
        [{ name: null }, 'name'],
        [{ visibility: null }, 'visibility'],
        [{ description: 'd'.repeat(2001) }, 'description'],
        [{ items_count: 0 }, ''],
      ] as const) {
        expectInvalid(await put(secret.uuid, alice, body), path)
      }
      expectInvalid(await put('0123-abcd', alice, { name: 'x' }), 'dataset_uuid')
      expect(await storedState(t)).toEqual(before)
      expect((await http('PUT', `/api/v1/datasets/${secret.uuid}`, { body: { name: 'x' } })).status).toBe(401)
    })
  })

  describe('delete (DELETE /api/v1/datasets/{dataset_uuid})', () => {
    it('soft-deletes (204, no body): afterwards 404, gone from lists, its items unreachable; records dataset.delete', async () => {
      const dataset = await makeDataset(t, alice, { name: 'Doomed Dataset' })
      const [item] = await addItems(t, alice, dataset.uuid, numbered(1))
      const res = await del(dataset.uuid, alice)
      expect(res.status).toBe(204)
      expect(res.body).toBeNull()
      expect((await get(dataset.uuid, alice)).status).toBe(404)
      expect((await http('GET', '/api/v1/datasets?search=Doomed', { token: alice.token })).body.meta.total).toBe(0)
      expect((await http('GET', `/api/v1/datasets/${dataset.uuid}/items`, { token: alice.token })).status).toBe(404)
      expect((await http('PUT', `/api/v1/dataset-items/${item.uuid}`, { token: alice.token, body: { input: 'x' } })).status).toBe(404)
      const [row] = await t.sql('select deleted_at from datasets where uuid = ?', [dataset.uuid])
      expect(row.deleted_at).not.toBeNull()
      expect((await auditOf(dataset.uuid)).map((e) => e.action)).toEqual(['dataset.create', 'dataset.add_items', 'dataset.delete'])
      expect((await del(dataset.uuid, alice)).status).toBe(404)
    })

    it('needs admin: a member, a write share and a public reader get 403; an admin share and a workspace admin may', async () => {
      const open = await makeDataset(t, alice, { visibility: 'workspace' }, team.uuid)
      expect((await del(open.uuid, carol, inTeam)).status).toBe(403)
      await shareDataset(t, open.uuid, { user: bob.id }, 'write')
      expect((await del(open.uuid, bob)).status).toBe(403)
      const pub = await makeDataset(t, alice, { visibility: 'public' })
      expect((await del(pub.uuid, bob)).status).toBe(403)
      const viaShare = await makeDataset(t, alice)
      await shareDataset(t, viaShare.uuid, { user: bob.id }, 'admin')
      expect((await del(viaShare.uuid, bob)).status).toBe(204)
      expect((await del(open.uuid, dave, inTeam)).status).toBe(204)
    })

    it("answers 404 for another tenant's dataset, 403 for a read-only token, 401 without one, deleting nothing", async () => {
      const dataset = await makeDataset(t, alice, { name: 'Not Bobs To Delete' })
      const before = await storedState(t)
      expectDatasetHidden(await del(dataset.uuid, bob), dataset)
      expect((await del(dataset.uuid, await readOnlyToken(t, alice))).status).toBe(403)
      expect((await http('DELETE', `/api/v1/datasets/${dataset.uuid}`)).status).toBe(401)
      expectInvalid(await del('0123-abcd', alice), 'dataset_uuid')
      expect(await storedState(t)).toEqual(before)
    })

    it('deletes through the tRPC caller', async () => {
      const dataset = await makeDataset(t, alice)
      await expect(t.as(alice).datasets.delete({ dataset_uuid: dataset.uuid })).resolves.toBeUndefined()
      expect((await trpcError(t.as(alice).datasets.retrieve({ dataset_uuid: dataset.uuid }))).code).toBe('NOT_FOUND')
    })
  })
})
