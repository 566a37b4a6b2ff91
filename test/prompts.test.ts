/**
 * Prompts (routers/prompts.router.ts, src/prompts/prompts.service.ts): create, retrieve, list and
 * delete; the specification's "Prompt (response shape)", the bounds and input-field rules of
 * docs/api/resources.md, the tenancy, visibility and share rules of docs/api/tenancy.md. The `PUT`
 * update has its own file (test/prompts-update.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type HttpResult, type TestApp, type TestUser } from './helpers/app.ts'
import { countRequestQueries, readOnlyToken } from './helpers/agents.ts'
import { ACME_KEY, dottedIssuePaths, expectInvalid, ISO_Z, issuePaths, trpcError, USER_KEYS, UUID, WORKSPACE_KEYS } from './helpers/expect.ts'
import {
  expectHidden,
  insertMedia,
  makePrompt,
  PROMPT_KEYS,
  sharePrompt,
  storedPrompt,
  TWO_INPUTS,
} from './helpers/prompts.ts'

describe('prompts', () => {
  let t: TestApp
  let alice: TestUser
  let bob: TestUser
  let carol: TestUser
  let dave: TestUser
  /** alice's team workspace: carol is a `member`, dave an `admin`. */
  let team: { uuid: string; name: string }
  const http = (...args: Parameters<TestApp['http']>) => t.http(...args)
  const inTeam = { 'x-workspace-uuid': '' }

  beforeAll(async () => {
    t = await createTestApp()
    alice = await t.make.user({ name: 'Alice Liddell' })
    bob = await t.make.user({ name: 'Bob Builder' })
    carol = await t.make.user({ name: 'Carol Member' })
    dave = await t.make.user({ name: 'Dave Admin' })
    team = await t.make.workspace(alice, { name: 'Prompt Team' })
    await t.make.member(team, alice, carol, 'member')
    await t.make.member(team, alice, dave, 'admin')
    inTeam['x-workspace-uuid'] = team.uuid
  })
  afterAll(async () => t?.close())

  describe('prompts.create (POST /api/v1/prompts)', () => {
    it('answers 201 with exactly the Prompt shape, the creator and the workspace nested shallow', async () => {
      const photo = await insertMedia(t, alice)
      const body = {
        name: 'Blog post writer',
        description: 'Writes a blog post',
        content: 'Write a {{tone}} blog post about {{topic}}.',
        visibility: 'workspace',
        profile_photo_key: photo,
        profile_photo_config: { emoji: '✍️', background_color: '#ffeecc', preference: 'emoji' },
        metadata: { input: TWO_INPUTS, audience: 'developers' },
      }
      const res = await http('POST', '/api/v1/prompts', { token: alice.token, body })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      expect(Object.keys(res.body)).toEqual(['data'])
      const prompt = res.body.data
      expect(Object.keys(prompt).sort()).toEqual(PROMPT_KEYS)
      expect(prompt.uuid).toMatch(UUID)
      expect(prompt).toMatchObject({
        name: 'Blog post writer',
        description: 'Writes a blog post',
        content: 'Write a {{tone}} blog post about {{topic}}.',
        visibility: 'workspace',
        is_owner: true,
        profile_photo_url: `${t.config.appUrl}/api/v1/media/${photo}`,
        profile_photo_config: { emoji: '✍️', background_color: '#ffeecc', preference: 'emoji' },
      })
      expect(prompt.metadata).toEqual({ input: TWO_INPUTS, audience: 'developers' })
      expect(prompt.created_at).toMatch(ISO_Z)
      expect(prompt.updated_at).toMatch(ISO_Z)
      expect(Object.keys(prompt.user).sort()).toEqual(USER_KEYS)
      expect(prompt.user).toMatchObject({ id: alice.id, name: 'Alice Liddell', email: alice.email, primary_workspace: null })
      expect(Object.keys(prompt.workspace).sort()).toEqual(WORKSPACE_KEYS)
      expect(prompt.workspace).toMatchObject({ uuid: alice.workspaceUuid, is_owner: true, user: null })

      const again = await http('GET', `/api/v1/prompts/${prompt.uuid}`, { token: alice.token })
      expect(again.status).toBe(200)
      expect(again.body.data).toEqual(prompt)
    })

    it('defaults: empty description, private, no photo, profile_photo_config null, no inputs; `required` defaults to false', async () => {
      const res = await http('POST', '/api/v1/prompts', {
        token: alice.token,
        body: { name: 'Bare', content: 'Hello', metadata: { input: [{ key: 'x', label: 'X', type: 'number' }] } },
      })
      expect(res.status).toBe(201)
      expect(res.body.data).toMatchObject({
        description: '',
        visibility: 'private',
        profile_photo_url: null,
        profile_photo_config: null,
        metadata: { input: [{ key: 'x', label: 'X', type: 'number', required: false }] },
      })
      const bare = await http('POST', '/api/v1/prompts', { token: alice.token, body: { name: 'Bare 2', content: 'Hi' } })
      expect(bare.body.data.metadata).toEqual({ input: [] })
    })

    it('creates in the workspace context: X-Workspace-UUID, else the body workspace_uuid', async () => {
      const viaHeader = await makePrompt(t, alice, {}, team.uuid)
      expect(viaHeader.workspace.uuid).toBe(team.uuid)
      const viaBody = await makePrompt(t, alice, { workspace_uuid: team.uuid })
      expect(viaBody.workspace.uuid).toBe(team.uuid)
      const res = await http('POST', '/api/v1/prompts', { token: bob.token, body: { name: 'x', content: 'y', workspace_uuid: team.uuid } })
      expect(res.status).toBe(404)
    })

    it('answers the same through the tRPC caller; `with` is validated', async () => {
      const created = await t.as(alice).prompts.create({
        name: 'Via caller',
        content: 'c {{topic}}',
        with: 'user,workspace',
        metadata: { input: [{ key: 'topic', label: 'Topic', type: 'text' }], audience: 'all' },
      })
      expect(created.data).toMatchObject({
        name: 'Via caller',
        is_owner: true,
        metadata: { input: [{ key: 'topic', label: 'Topic', type: 'text', required: false }], audience: 'all' },
      })
      expect(created.data.user?.id).toBe(alice.id)
      const error = await trpcError(t.as(alice).prompts.create({ name: 'x', content: 'y', with: 'tools' }))
      expect(issuePaths(error)).toEqual([['with', 0]])
    })

    const input = (extra: Record<string, unknown>) => ({ key: 'k', label: 'K', type: 'text', ...extra })
    it.each([
      ['a missing name', { content: 'c' }, 'name'],
      ['a blank name', { name: '   ', content: 'c' }, 'name'],
      ['a name over 255 characters', { name: 'n'.repeat(256), content: 'c' }, 'name'],
      ['a name that is not a string', { name: 7, content: 'c' }, 'name'],
      ['a missing content', { name: 'n' }, 'content'],
      ['an empty content', { name: 'n', content: '' }, 'content'],
      ['a content over 100,000 characters', { name: 'n', content: 'c'.repeat(100_001) }, 'content'],
      ['a content with a NUL character', { name: 'n', content: 'a\u0000b' }, 'content'],
      ['a description over 2,000 characters', { name: 'n', content: 'c', description: 'd'.repeat(2001) }, 'description'],
      ['an unknown visibility', { name: 'n', content: 'c', visibility: 'secret' }, 'visibility'],
      ['a profile_photo_key that is no upload', { name: 'n', content: 'c', profile_photo_key: 'nope.png' }, 'profile_photo_key'],
      ['an unknown preference', { name: 'n', content: 'c', profile_photo_config: { preference: 'video' } }, 'profile_photo_config.preference'],
      ['an unknown profile_photo_config member', { name: 'n', content: 'c', profile_photo_config: { size: 'x' } }, 'profile_photo_config'],
      ['metadata.input that is not an array', { name: 'n', content: 'c', metadata: { input: 'topic' } }, 'metadata.input'],
      ['an input without a key', { name: 'n', content: 'c', metadata: { input: [{ label: 'L', type: 'text' }] } }, 'metadata.input.0.key'],
      ['an input key starting with a digit', { name: 'n', content: 'c', metadata: { input: [input({ key: '1st' })] } }, 'metadata.input.0.key'],
      ['an input key with a space', { name: 'n', content: 'c', metadata: { input: [input({ key: 'a b' })] } }, 'metadata.input.0.key'],
      ['an input key with a brace', { name: 'n', content: 'c', metadata: { input: [input({ key: 'a}}' })] } }, 'metadata.input.0.key'],
      ['an input key over 64 characters', { name: 'n', content: 'c', metadata: { input: [input({ key: 'k'.repeat(65) })] } }, 'metadata.input.0.key'],
      ['an input without a label', { name: 'n', content: 'c', metadata: { input: [{ key: 'k', type: 'text' }] } }, 'metadata.input.0.label'],
      ['an input label over 255 characters', { name: 'n', content: 'c', metadata: { input: [input({ label: 'l'.repeat(256) })] } }, 'metadata.input.0.label'],
      ['an unknown input type', { name: 'n', content: 'c', metadata: { input: [input({ type: 'color' })] } }, 'metadata.input.0.type'],
      ['required as the string "true"', { name: 'n', content: 'c', metadata: { input: [input({ required: 'true' })] } }, 'metadata.input.0.required'],
      ['options on a text input', { name: 'n', content: 'c', metadata: { input: [input({ options: ['a'] })] } }, 'metadata.input.0.options'],
      ['a select input without options', { name: 'n', content: 'c', metadata: { input: [input({ type: 'select' })] } }, 'metadata.input.0.options'],
      ['a multiselect input with no options', { name: 'n', content: 'c', metadata: { input: [input({ type: 'multiselect', options: [] })] } }, 'metadata.input.0.options'],
      [
        'a select input with 101 options',
        { name: 'n', content: 'c', metadata: { input: [input({ type: 'select', options: Array.from({ length: 101 }, (_, i) => `o${i}`) })] } },
        'metadata.input.0.options',
      ],
      ['an empty option', { name: 'n', content: 'c', metadata: { input: [input({ type: 'select', options: ['a', ''] })] } }, 'metadata.input.0.options.1'],
      ['an option over 255 characters', { name: 'n', content: 'c', metadata: { input: [input({ type: 'select', options: ['o'.repeat(256)] })] } }, 'metadata.input.0.options.0'],
      ['a repeated option', { name: 'n', content: 'c', metadata: { input: [input({ type: 'select', options: ['a', 'a'] })] } }, 'metadata.input.0.options.1'],
      ['an input with an unknown member', { name: 'n', content: 'c', metadata: { input: [input({ default: 'x' })] } }, 'metadata.input.0'],
      ['two inputs with the same key', { name: 'n', content: 'c', metadata: { input: [input({}), input({ label: 'Again' })] } }, 'metadata.input.1.key'],
      [
        'more than 50 inputs',
        { name: 'n', content: 'c', metadata: { input: Array.from({ length: 51 }, (_, i) => input({ key: `k${i}` })) } },
        'metadata.input',
      ],
      ['an extra metadata key with a number value', { name: 'n', content: 'c', metadata: { extra: 5 } }, 'metadata.extra'],
      ['an extra metadata key with a bad name', { name: 'n', content: 'c', metadata: { 'bad key!': 'x' } }, 'metadata.bad key!'],
      ['an extra metadata value over 10,000 characters', { name: 'n', content: 'c', metadata: { note: 'x'.repeat(10_001) } }, 'metadata.note'],
      [
        'metadata over 64 KiB',
        { name: 'n', content: 'c', metadata: Object.fromEntries(Array.from({ length: 7 }, (_, i) => [`note${i}`, 'x'.repeat(10_000)])) },
        'metadata',
      ],
      ['metadata that is not an object', { name: 'n', content: 'c', metadata: 'x' }, 'metadata'],
      ['an unknown relation in with', { name: 'n', content: 'c', with: 'user,tools' }, 'with.1'],
      ['a malformed workspace_uuid', { name: 'n', content: 'c', workspace_uuid: 'nope' }, 'workspace_uuid'],
    ])('answers 400 naming the field for %s', async (_label, body, path) => {
      const before = await t.sql('select count(*)::int as n from prompts')
      expectInvalid(await http('POST', '/api/v1/prompts', { token: alice.token, body }), path)
      expect(await t.sql('select count(*)::int as n from prompts')).toEqual(before)
    })

    it('refuses an upload that is not an image as profile_photo_key, and one of another tenant', async () => {
      const pdf = await insertMedia(t, alice, 'application/pdf')
      expectInvalid(await http('POST', '/api/v1/prompts', { token: alice.token, body: { name: 'n', content: 'c', profile_photo_key: pdf } }), 'profile_photo_key')
      const bobs = await insertMedia(t, bob)
      const res = await http('POST', '/api/v1/prompts', { token: alice.token, body: { name: 'n', content: 'c', profile_photo_key: bobs } })
      expectInvalid(res, 'profile_photo_key')
    })

    it('answers 400 for an unknown top-level field, naming it', async () => {
      const res = await http('POST', '/api/v1/prompts', { token: alice.token, body: { name: 'n', content: 'c', user_id: bob.id } })
      expect(res.status).toBe(400)
      expect(res.body.issues).toEqual([expect.objectContaining({ code: 'unrecognized_keys', keys: ['user_id'], path: [] })])
    })

    it('answers 401 without a token and 403 for a read-only token, creating nothing', async () => {
      expect((await http('POST', '/api/v1/prompts', { body: { name: 'Nope', content: 'c' } })).status).toBe(401)
      const token = (await readOnlyToken(t, alice)).token
      const res = await http('POST', '/api/v1/prompts', { token, body: { name: 'Nope', content: 'c' } })
      expect(res.status).toBe(403)
      expect(res.body.code).toBe('FORBIDDEN')
      expect(await t.sql("select 1 from prompts where name = 'Nope'")).toHaveLength(0)
    })
  })

  describe('prompts.retrieve (GET /api/v1/prompts/{prompt_uuid})', () => {
    const get = (uuid: string, user: { token: string }, headers: Record<string, string> = {}, query = '') =>
      http('GET', `/api/v1/prompts/${uuid}${query}`, { token: user.token, headers })

    it('answers user and workspace by default; `with` only validates', async () => {
      const prompt = await makePrompt(t, alice)
      const plain = await get(prompt.uuid, alice)
      expect(plain.body.data).toEqual(prompt)
      expect((await get(prompt.uuid, alice, {}, '?with=user')).body.data).toEqual(prompt)
      expectInvalid(await get(prompt.uuid, alice, {}, '?with=shares'), 'with.0')
      const viaCaller = await t.as(alice).prompts.retrieve({ prompt_uuid: prompt.uuid })
      expect(viaCaller.data).toEqual(prompt)
    })

    it("answers 404 for another tenant's private prompt, saying nothing of it", async () => {
      const prompt = await makePrompt(t, alice, { name: 'Alice Secret Prompt' })
      expectHidden(await get(prompt.uuid, bob), prompt)
      expectHidden(await get('0190a5e0-0000-7000-8000-000000000000', bob), prompt)
    })

    it('follows visibility: workspace prompts to members, private ones to the owner and workspace admins only', async () => {
      const shared = await makePrompt(t, alice, { visibility: 'workspace' }, team.uuid)
      const secret = await makePrompt(t, alice, { visibility: 'private', name: 'Team Private' }, team.uuid)
      const asCarol = await get(shared.uuid, carol, inTeam)
      expect(asCarol.status).toBe(200)
      expect(asCarol.body.data).toMatchObject({ is_owner: false, user: { id: alice.id }, workspace: { uuid: team.uuid, is_owner: false } })
      expectHidden(await get(secret.uuid, carol, inTeam), secret)
      // Outside the team's workspace context the workspace prompt is not Carol's to see.
      expect((await get(shared.uuid, carol)).status).toBe(404)
      expect((await get(secret.uuid, dave, inTeam)).status).toBe(200)
      expectHidden(await get(shared.uuid, bob), shared)
    })

    it('shows public prompts to any user of the service scope, not to another scope', async () => {
      const prompt = await makePrompt(t, alice, { visibility: 'public', name: 'Public Scope Prompt' })
      expect((await get(prompt.uuid, bob)).status).toBe(200)
      const acme = await t.make.user({ serviceKey: ACME_KEY })
      const res = await get(prompt.uuid, acme, { 'x-service-authorization': ACME_KEY })
      expectHidden(res, prompt)
    })

    it('shows a prompt shared with the caller, or with a workspace of theirs', async () => {
      const toUser = await makePrompt(t, alice, { name: 'Shared To Bob' })
      await sharePrompt(t, toUser.uuid, { user: bob.id }, 'read')
      expect((await get(toUser.uuid, bob)).body.data).toMatchObject({ uuid: toUser.uuid, is_owner: false })
      const toWorkspace = await makePrompt(t, alice, { name: 'Shared To Bob WS' })
      await sharePrompt(t, toWorkspace.uuid, { workspace: bob.workspaceUuid }, 'read')
      expect((await get(toWorkspace.uuid, bob)).status).toBe(200)
    })

    it('answers 400 naming prompt_uuid for a malformed uuid, 401 without a token', async () => {
      expectInvalid(await get('0123-abcd', alice), 'prompt_uuid')
      const prompt = await makePrompt(t, alice)
      expect((await http('GET', `/api/v1/prompts/${prompt.uuid}`)).status).toBe(401)
    })
  })

  describe('prompts.list (GET /api/v1/prompts)', () => {
    let erin: TestUser
    let erinWs: string
    const names = ['Zeta summary', 'alpha outline', 'Mid 100% effort', 'Beta notes']
    beforeAll(async () => {
      erin = await t.make.user({ name: 'Erin Lister' })
      erinWs = (await t.make.workspace(erin, { name: 'Erin Lists' })).uuid
      for (const name of names) await makePrompt(t, erin, { name, description: name === 'Beta notes' ? 'About ZEBRAS' : '' }, erinWs)
    })
    const list = (query = '', user: { token: string } = erin, headers: Record<string, string> = { 'x-workspace-uuid': erinWs }) =>
      http('GET', `/api/v1/prompts${query}`, { token: user.token, headers })
    const namesOf = (res: HttpResult) => res.body.data.map((p: { name: string }) => p.name)

    it('answers the paginator shape, newest first, without user and workspace unless asked', async () => {
      const res = await list()
      expect(res.status).toBe(200)
      expect(Object.keys(res.body)).toEqual(['data', 'links', 'meta'])
      const path = `${t.config.appUrl}/api/v1/prompts`
      expect(res.body.meta).toEqual({ current_page: 1, from: 1, last_page: 1, path, per_page: 15, to: 4, total: 4 })
      expect(res.body.links.first).toBe(`${path}?sort=-created_at&page=1&per_page=15`)
      expect(namesOf(res)).toEqual([...names].reverse())
      for (const item of res.body.data) {
        expect(Object.keys(item).sort()).toEqual(PROMPT_KEYS)
        expect(item.user).toBeNull()
        expect(item.workspace).toBeNull()
        expect(item.is_owner).toBe(true)
      }
      const embedded = await list('?with=user,workspace')
      for (const item of embedded.body.data) {
        expect(Object.keys(item.user).sort()).toEqual(USER_KEYS)
        expect(item.user).toMatchObject({ id: erin.id, primary_workspace: null })
        expect(item.workspace).toMatchObject({ uuid: erinWs, user: null })
      }
      const onlyUser = await list('?with=user')
      expect(onlyUser.body.data[0].workspace).toBeNull()
      expect(onlyUser.body.data[0].user.id).toBe(erin.id)
    })

    it('pages and sorts by name (case-insensitive), created_at and updated_at', async () => {
      const asc = ['alpha outline', 'Beta notes', 'Mid 100% effort', 'Zeta summary']
      expect(namesOf(await list('?sort=name'))).toEqual(asc)
      expect(namesOf(await list('?sort=-name'))).toEqual([...asc].reverse())
      expect(namesOf(await list('?sort=created_at'))).toEqual(names)
      expect(namesOf(await list('?sort=updated_at'))).toEqual(names)
      const second = await list('?sort=name&per_page=3&page=2')
      expect(namesOf(second)).toEqual(['Zeta summary'])
      expect(second.body.meta).toMatchObject({ current_page: 2, from: 4, to: 4, last_page: 2, total: 4 })
    })

    it('searches name and description case-insensitively, % and _ taken literally', async () => {
      expect(namesOf(await list('?search=ALPHA'))).toEqual(['alpha outline'])
      expect(namesOf(await list('?search=zebras'))).toEqual(['Beta notes'])
      expect(namesOf(await list('?search=%25'))).toEqual(['Mid 100% effort'])
      expect((await list('?search=_')).body.meta.total).toBe(0)
    })

    it("lists the team's workspace prompts to members, never others' private prompts", async () => {
      const open = await makePrompt(t, alice, { visibility: 'workspace', name: 'Team Open' }, team.uuid)
      const closed = await makePrompt(t, alice, { visibility: 'private', name: 'Team Closed' }, team.uuid)
      const carols = await list('?per_page=100', carol, inTeam)
      const uuids = carols.body.data.map((p: { uuid: string }) => p.uuid)
      expect(uuids).toContain(open.uuid)
      expect(uuids).not.toContain(closed.uuid)
      expect((await list('?per_page=100&visibility=workspace', carol, inTeam)).body.data.map((p: { uuid: string }) => p.uuid)).toContain(open.uuid)
      expect((await list('?per_page=100&visibility=private', carol, inTeam)).body.meta.total).toBe(0)
      // The workspace context may come from the workspace_uuid filter too.
      const viaFilter = await list(`?per_page=100&workspace_uuid=${team.uuid}`, carol, {})
      expect(viaFilter.body.data.map((p: { uuid: string }) => p.uuid)).toContain(open.uuid)
      expect(viaFilter.body.links.first).toContain(`workspace_uuid=${team.uuid}`)
      // A workspace admin lists every prompt of the workspace.
      const daves = (await list('?per_page=100', dave, inTeam)).body.data.map((p: { uuid: string }) => p.uuid)
      expect(daves).toEqual(expect.arrayContaining([open.uuid, closed.uuid]))
      const bobs = await list('?per_page=100', bob, {})
      expect(JSON.stringify(bobs.body)).not.toContain('Team Open')
      expect(JSON.stringify(bobs.body)).not.toContain('Team Closed')
    })

    it('visibility=public lists public prompts of every workspace of the service scope, not of another scope', async () => {
      const pub = await makePrompt(t, alice, { visibility: 'public', name: 'Everyone Can See' })
      const acme = await t.make.user({ serviceKey: ACME_KEY })
      const acmePub = await t.http('POST', '/api/v1/prompts', {
        token: acme.token,
        headers: { 'x-service-authorization': ACME_KEY },
        body: { name: 'Acme Public', content: 'c', visibility: 'public' },
      })
      expect(acmePub.status).toBe(201)
      const bobs = await list('?visibility=public&per_page=100', bob, {})
      const uuids = bobs.body.data.map((p: { uuid: string }) => p.uuid)
      expect(uuids).toContain(pub.uuid)
      expect(uuids).not.toContain(acmePub.body.data.uuid)
      expect(bobs.body.data.find((p: { uuid: string }) => p.uuid === pub.uuid).is_owner).toBe(false)
      // Without the filter, another workspace's public prompt is not in bob's workspace list.
      expect((await list('?per_page=100', bob, {})).body.data.map((p: { uuid: string }) => p.uuid)).not.toContain(pub.uuid)
      const acmes = await list('?visibility=public&per_page=100', acme, { 'x-service-authorization': ACME_KEY })
      expect(acmes.body.data.map((p: { uuid: string }) => p.uuid)).toEqual([acmePub.body.data.uuid])
    })

    it('lists prompts shared with the caller', async () => {
      const shared = await makePrompt(t, alice, { name: 'Shared Into List' })
      await sharePrompt(t, shared.uuid, { user: erin.id }, 'read')
      expect(namesOf(await list('?search=Shared Into'))).toEqual(['Shared Into List'])
    })

    it('answers in a constant number of SQL queries whatever the page size', async () => {
      for (let i = 0; i < 20; i += 1) await makePrompt(t, erin, { name: `Bulk ${i}` }, erinWs)
      const count = async (query: string) => {
        let status = 0
        const sent = await countRequestQueries(t, async () => {
          status = (await list(query)).status
        })
        expect(status).toBe(200)
        return sent.length
      }
      const small = await count('?per_page=1&with=user,workspace')
      const large = await count('?per_page=24&with=user,workspace')
      // The page and the count (authentication and the workspace context may add their own).
      expect(small).toBeGreaterThanOrEqual(2)
      expect(large).toBe(small)
      await t.sql("update prompts set deleted_at = now() where name like 'Bulk %'")
    })

    it.each([
      ['per_page=0', 'per_page'],
      ['per_page=101', 'per_page'],
      ['page=0', 'page'],
      ['sort=content', 'sort'],
      ['with=tools', 'with'],
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
      expect((await http('GET', '/api/v1/prompts')).status).toBe(401)
    })
  })

  describe('prompts.delete (DELETE /api/v1/prompts/{prompt_uuid})', () => {
    const del = (uuid: string, user: { token: string }, headers: Record<string, string> = {}) =>
      http('DELETE', `/api/v1/prompts/${uuid}`, { token: user.token, headers })

    it('soft-deletes (204, no body); afterwards it is 404 and gone from lists', async () => {
      const prompt = await makePrompt(t, alice, { name: 'Doomed Prompt' })
      const res = await del(prompt.uuid, alice)
      expect(res.status).toBe(204)
      expect(res.body).toBeNull()
      expect((await http('GET', `/api/v1/prompts/${prompt.uuid}`, { token: alice.token })).status).toBe(404)
      const listed = await http('GET', '/api/v1/prompts?per_page=100&search=Doomed', { token: alice.token })
      expect(listed.body.meta.total).toBe(0)
      const [row] = await t.sql('select deleted_at from prompts where uuid = ?', [prompt.uuid])
      expect(row.deleted_at).not.toBeNull()
      expect((await del(prompt.uuid, alice)).status).toBe(404)
    })

    it('needs admin: a member, a write share and a public reader get 403; an admin share and a workspace admin may', async () => {
      const open = await makePrompt(t, alice, { visibility: 'workspace' }, team.uuid)
      const before = await storedPrompt(t, open.uuid)
      expect((await del(open.uuid, carol, inTeam)).status).toBe(403)
      await sharePrompt(t, open.uuid, { user: bob.id }, 'write')
      expect((await del(open.uuid, bob)).status).toBe(403)
      expect(await storedPrompt(t, open.uuid)).toEqual(before)
      const pub = await makePrompt(t, alice, { visibility: 'public' })
      expect((await del(pub.uuid, bob)).status).toBe(403)

      const viaShare = await makePrompt(t, alice)
      await sharePrompt(t, viaShare.uuid, { user: bob.id }, 'admin')
      expect((await del(viaShare.uuid, bob)).status).toBe(204)
      expect((await del(open.uuid, dave, inTeam)).status).toBe(204)
    })

    it("answers 404 for another tenant's prompt, saying nothing, and leaves it", async () => {
      const prompt = await makePrompt(t, alice, { name: 'Not Bobs To Delete' })
      const before = await storedPrompt(t, prompt.uuid)
      expectHidden(await del(prompt.uuid, bob), prompt)
      expect(await storedPrompt(t, prompt.uuid)).toEqual(before)
    })

    it('answers 400 naming prompt_uuid for a malformed uuid', async () => {
      expectInvalid(await del('0123-abcd', alice), 'prompt_uuid')
    })

    it('answers 403 for a read-only token and 401 without a token, deleting nothing', async () => {
      const prompt = await makePrompt(t, alice)
      const token = (await readOnlyToken(t, alice)).token
      expect((await del(prompt.uuid, { token })).status).toBe(403)
      expect((await http('DELETE', `/api/v1/prompts/${prompt.uuid}`)).status).toBe(401)
      expect((await storedPrompt(t, prompt.uuid)).deleted_at).toBeNull()
    })

    it('deletes through the tRPC caller', async () => {
      const prompt = await makePrompt(t, alice)
      await expect(t.as(alice).prompts.delete({ prompt_uuid: prompt.uuid })).resolves.toBeUndefined()
      const error = await trpcError(t.as(alice).prompts.retrieve({ prompt_uuid: prompt.uuid }))
      expect(error.code).toBe('NOT_FOUND')
    })
  })
})
