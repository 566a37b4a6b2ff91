/**
 * Workflows as stored resources (routers/workflows.router.ts, src/workflows/workflows.service.ts):
 * create, retrieve, update (PUT semantics of docs/api/resources.md), soft delete, favourites; the
 * Workflow shape of the specification plus categories, is_favorite, user and workspace; graph
 * validation on save (docs/api/workflows.md); tenancy and permissions of docs/api/tenancy.md.
 * Lists and filters: workflows-list.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { readOnlyToken } from './helpers/agents.ts'
import { expectErrorBody, expectInvalid, expectStatus, hiddenCheck, ISO_Z, issuePaths, trpcError, USER_KEYS, UUID, WORKSPACE_KEYS } from './helpers/expect.ts'
import { PDF, uploadKey } from './helpers/media.ts'
import { workspaceId } from './helpers/rows.ts'
import { WORKFLOW_KEYS } from './helpers/workflows.ts'
import { keyringOf, open } from '../src/platform/secrets.ts'
import { webhookSecretContext } from '../src/workflows/webhooks.service.ts'

const NODES = [
  { id: 'start', type: 'manual_trigger', name: 'Start', parameters: {}, position: { x: 0, y: 0 } },
  { id: 'fetch', type: 'http_request', name: 'Fetch', parameters: { url: 'https://example.com', method: 'GET' }, position: [240, 0] as [number, number] },
]
const EDGES = [{ id: 'e1', source: 'start', target: 'fetch', source_handle: null, target_handle: 'in' }]

/** A 404 that says nothing of the hidden workflow. */
const expectHidden = hiddenCheck('Workflow')

describe('workflows', () => {
  let t: TestApp
  /** Owner of her primary workspace. */
  let alice: TestUser
  /** A `member` of alice's workspace. */
  let carol: TestUser
  /** Another tenant. */
  let bob: TestUser
  let categories: { uuid: string; slug: string }[]
  let photoKey: string
  const http = (...args: Parameters<TestApp['http']>) => t.http(...args)

  beforeAll(async () => {
    t = await createTestApp()
    alice = await t.make.user({ name: 'Alice Liddell' })
    carol = await t.make.user({ name: 'Carol Member' })
    bob = await t.make.user({ name: 'Bob Builder' })
    await t.make.member(alice.workspaceUuid, alice, carol, 'member')
    categories = (await t.as(alice).categories.list({ per_page: 100 })).data
    photoKey = await uploadKey(t, alice.token)
  })
  afterAll(async () => t?.close())

  /** A workflow of `user` through the caller. */
  const make = async (user: TestUser, input: Record<string, unknown> = {}) =>
    (await t.as(user).workflows.create({ name: 'Triage', ...input })).data

  /** Grants a share on a workflow straight in the table (the share endpoint: workflows-share.test.ts). */
  async function share(uuid: string, entity: 'user' | 'workspace', entityId: number, permission: 'read' | 'write' | 'admin') {
    await t.sql(
      `insert into shares (resource_type, resource_id, entity_type, entity_id, permission, created_at, updated_at)
       select 'workflows', id, ?, ?, ?, now(), now() from workflows where uuid = ?`,
      [entity, entityId, permission, uuid],
    )
  }

  const rowOf = async (uuid: string) =>
    (await t.sql('select name, description, nodes, edges, settings, deleted_at, updated_at from workflows where uuid = ?', [uuid]))[0]

  describe('workflows.create (POST /api/v1/workflows)', () => {
    it('answers 201 with the exact Workflow shape, the graph as sent, categories, owner and workspace nested shallow', async () => {
      const body = {
        name: 'Invoice triage',
        description: 'Routes invoices to the right team',
        profile_photo_key: photoKey,
        profile_photo_config: { emoji: '🧾', background_color: '#ffeecc', preference: 'emoji' },
        visibility: 'workspace',
        is_active: true,
        is_template: true,
        category_uuids: [categories[1].uuid, categories[0].uuid],
        nodes: NODES,
        edges: EDGES,
        settings: { timeout_seconds: 30, error_policy: 'stop', on_interrupt: 'resume', requires_approval: true },
        static_data: { last_id: 41 },
        pin_data: { fetch: [{ json: { ok: true } }] },
      }
      const res = await http('POST', '/api/v1/workflows', { token: alice.token, body })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      expect(Object.keys(res.body)).toEqual(['data'])
      const wf = res.body.data
      expect(Object.keys(wf).sort()).toEqual(WORKFLOW_KEYS)
      expect(wf).toMatchObject({
        uuid: expect.stringMatching(UUID),
        name: 'Invoice triage',
        description: 'Routes invoices to the right team',
        profile_photo_url: `${t.config.appUrl}/api/v1/media/${photoKey}`,
        profile_photo_config: body.profile_photo_config,
        visibility: 'workspace',
        is_active: true,
        is_owner: true,
        is_template: true,
        is_favorite: false,
        nodes: NODES,
        edges: EDGES,
        settings: body.settings,
        static_data: body.static_data,
        pin_data: body.pin_data,
        trigger_count: 0,
        deleted_at: null,
      })
      expect(wf.created_at).toMatch(ISO_Z)
      expect(wf.updated_at).toMatch(ISO_Z)
      // Catalogue order, whatever order they were sent in.
      expect(wf.categories.map((c: { uuid: string }) => c.uuid)).toEqual([categories[0].uuid, categories[1].uuid])
      expect(Object.keys(wf.categories[0]).sort()).toEqual(['description', 'name', 'slug', 'uuid'])
      expect(Object.keys(wf.user).sort()).toEqual(USER_KEYS)
      expect(wf.user).toMatchObject({ id: alice.id, name: 'Alice Liddell', primary_workspace: null })
      expect(Object.keys(wf.workspace).sort()).toEqual(WORKSPACE_KEYS)
      expect(wf.workspace).toMatchObject({ uuid: alice.workspaceUuid, is_owner: true, user: null })

      const again = await http('GET', `/api/v1/workflows/${wf.uuid}`, { token: alice.token })
      expect(again.status).toBe(200)
      expect(again.body.data).toEqual(wf)
    })

    it('defaults: private, inactive, not a template, empty graph and objects, no photo, no categories', async () => {
      const res = await http('POST', '/api/v1/workflows', { token: alice.token, body: { name: 'Bare' } })
      expect(res.status).toBe(201)
      expect(res.body.data).toMatchObject({
        description: '',
        profile_photo_url: null,
        profile_photo_config: {},
        visibility: 'private',
        is_active: false,
        is_template: false,
        nodes: [],
        edges: [],
        settings: {},
        static_data: {},
        pin_data: {},
        categories: [],
      })
    })

    it('answers the same through the tRPC caller, and creates in the workspace named by workspace_uuid', async () => {
      const team = await t.make.workspace(alice, { name: 'Automation team' })
      const created = await t.as(alice).workflows.create({ name: 'In team', workspace_uuid: team.uuid, nodes: NODES, edges: EDGES })
      expect(created.data.workspace?.uuid).toBe(team.uuid)
      const [row] = await t.sql('select workspace_id::float8 as id from workflows where uuid = ?', [created.data.uuid])
      expect(Number(row.id)).toBe(await workspaceId(t, team.uuid))
      const elsewhere = await http('POST', '/api/v1/workflows', { token: bob.token, body: { name: 'x', workspace_uuid: team.uuid } })
      expectErrorBody(elsewhere, 404, 'NOT_FOUND', 'Workspace not found')
    })

    it.each([
      ['a missing name', { name: undefined }, 'name'],
      ['an empty name', { name: '' }, 'name'],
      ['a blank name', { name: '   ' }, 'name'],
      ['a name over 255 characters', { name: 'n'.repeat(256) }, 'name'],
      ['a description over 2000 characters', { description: 'd'.repeat(2001) }, 'description'],
      ['an unknown visibility', { visibility: 'team' }, 'visibility'],
      ['is_active as the string "true"', { is_active: 'true' }, 'is_active'],
      ['is_template as 1', { is_template: 1 }, 'is_template'],
      ['profile_photo_config with an unknown preference', { profile_photo_config: { preference: 'video' } }, 'profile_photo_config.preference'],
      ['profile_photo_config with an unknown member', { profile_photo_config: { size: 'xl' } }, 'profile_photo_config'],
      ['category_uuids that is not an array', { category_uuids: 'abc' }, 'category_uuids'],
      ['a malformed category uuid', { category_uuids: ['nope'] }, 'category_uuids.0'],
      ['nodes that are not an array', { nodes: {} }, 'nodes'],
      ['a node that is not an object', { nodes: ['start'] }, 'nodes.0'],
      ['a node without an id', { nodes: [{ type: 't' }] }, 'nodes.0.id'],
      ['a node id over 100 characters', { nodes: [{ id: 'x'.repeat(101), type: 't' }] }, 'nodes.0.id'],
      ['a node without a type', { nodes: [{ id: 'a' }] }, 'nodes.0.type'],
      ['a node with array parameters', { nodes: [{ id: 'a', type: 't', parameters: [] }] }, 'nodes.0.parameters'],
      ['a node with a bad position', { nodes: [{ id: 'a', type: 't', position: { x: 'left', y: 0 } }] }, 'nodes.0.position'],
      ['an edge without a target', { nodes: NODES, edges: [{ source: 'start' }] }, 'edges.0.target'],
      ['an edge with a numeric source_handle', { nodes: NODES, edges: [{ source: 'start', target: 'fetch', source_handle: 1 }] }, 'edges.0.source_handle'],
      ['more than 500 nodes', { nodes: Array.from({ length: 501 }, (_, i) => ({ id: `n${i}`, type: 't' })) }, 'nodes'],
      ['settings that are an array', { settings: [] }, 'settings'],
      ['static_data that is a string', { static_data: 'x' }, 'static_data'],
      ['pin_data holding a NUL character', { pin_data: { fetch: ['a\u0000b'] } }, 'pin_data.fetch.0'],
      ['node parameters holding a lone surrogate', { nodes: [{ id: 'a', type: 't', parameters: { q: '\ud800' } }] }, 'nodes.0.parameters.q'],
    ])('answers 400 naming the field for %s', async (_label, extra, path) => {
      // JSON leaves out an undefined name: the missing-name case.
      const body = { name: 'Checked', ...extra }
      const res = await http('POST', '/api/v1/workflows', { token: alice.token, body })
      expectInvalid(res, path)
    })

    it('answers 400 naming the later node for a duplicate node id, and the edge end for a dangling edge', async () => {
      const duplicate = await http('POST', '/api/v1/workflows', {
        token: alice.token,
        body: { name: 'Dup', nodes: [...NODES, { id: 'start', type: 'set' }] },
      })
      expect(duplicate.body.issues).toEqual([{ code: 'custom', path: ['nodes', 2, 'id'], message: 'Duplicate node id "start"' }])
      const edges = [EDGES[0], { source: 'start', target: 'fetch' }, { source: 'fetch', target: 'ghost' }]
      const dangling = await http('POST', '/api/v1/workflows', { token: alice.token, body: { name: 'Dangling', nodes: NODES, edges } })
      expectInvalid(dangling, 'edges.2.target')
      expect(dangling.body.issues).toEqual([{ code: 'custom', path: ['edges', 2, 'target'], message: 'No node has the id "ghost"' }])
      expect(await t.sql("select 1 from workflows where name in ('Dup', 'Dangling')")).toHaveLength(0)
    })

    it('answers 400 naming category_uuids.N for a category that does not exist', async () => {
      const res = await http('POST', '/api/v1/workflows', {
        token: alice.token,
        body: { name: 'Cats', category_uuids: [categories[0].uuid, '01234567-89ab-4def-8123-456789abcdef'] },
      })
      expect(res.body.issues).toEqual([{ code: 'custom', path: ['category_uuids', 1], message: 'No category has this uuid' }])
    })

    it('answers 400 naming profile_photo_key for an unknown key, another tenant\'s upload, or a file that is not an image', async () => {
      const bobsPhoto = await uploadKey(t, bob.token)
      const pdf = await uploadKey(t, alice.token, { bytes: PDF, filename: 'doc.pdf' })
      for (const key of ['missing.png', bobsPhoto, pdf]) {
        expectInvalid(await http('POST', '/api/v1/workflows', { token: alice.token, body: { name: 'Photo', profile_photo_key: key } }), 'profile_photo_key')
      }
    })

    it('answers 400 for unknown and read-only top-level fields, and 400 for a graph over 1 MiB', async () => {
      for (const field of ['trigger_count', 'deleted_at', 'uuid', 'user_id']) {
        const res = await http('POST', '/api/v1/workflows', { token: alice.token, body: { name: 'x', [field]: 1 } })
        expect(res.status).toBe(400)
        expect(res.body.issues[0]).toMatchObject({ code: 'unrecognized_keys', keys: [field] })
      }
      const error = await trpcError(t.as(alice).workflows.create({ name: 'Huge', static_data: { blob: 'x'.repeat(1024 * 1024) } }))
      expect(error.code).toBe('BAD_REQUEST')
      expect(issuePaths(error)).toEqual([[]])
    })

    it('answers 400 naming the field for a bad webhook_secret or settings member, creating nothing', async () => {
      const cases: [Record<string, unknown>, string][] = [
        [{ webhook_secret: 'x'.repeat(15) }, 'webhook_secret'],
        [{ webhook_secret: 'x'.repeat(201) }, 'webhook_secret'],
        [{ webhook_secret: `${'x'.repeat(16)}\u0000` }, 'webhook_secret'],
        [{ webhook_secret: 1234567890123456 }, 'webhook_secret'],
        [{ settings: { timeout_seconds: 0 } }, 'settings.timeout_seconds'],
        [{ settings: { timeout_seconds: 86_401 } }, 'settings.timeout_seconds'],
        [{ settings: { timeout_seconds: '30' } }, 'settings.timeout_seconds'],
        [{ settings: { timeout_seconds: 1.5 } }, 'settings.timeout_seconds'],
        [{ settings: { requires_approval: 'yes' } }, 'settings.requires_approval'],
        [{ settings: { error_policy: 'ignore' } }, 'settings.error_policy'],
        [{ settings: { on_interrupt: 'retry' } }, 'settings.on_interrupt'],
        [{ settings: { on_interrupt: true } }, 'settings.on_interrupt'],
      ]
      for (const [body, path] of cases) {
        expectInvalid(await http('POST', '/api/v1/workflows', { token: alice.token, body: { name: 'Bad settings', ...body } }), path)
      }
      expect(await t.sql("select 1 from workflows where name = 'Bad settings'")).toHaveLength(0)
    })

    it('seals webhook_secret bound to the workflow, never shows it, and keeps, replaces or (null) removes it on PUT', async () => {
      const secret = 'a-webhook-secret-of-alice'
      const res = await http('POST', '/api/v1/workflows', { token: alice.token, body: { name: 'Signed', webhook_secret: secret } })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      expect(res.body.data).toMatchObject({ has_webhook_secret: true, webhook_url: expect.stringContaining('/api/v1/hooks/') })
      expect(JSON.stringify(res.body)).not.toContain(secret)
      const { uuid } = res.body.data
      const stored = async () =>
        (await t.sql('select webhook_secret_ciphertext as ciphertext, webhook_secret_key_id as "keyId" from workflows where uuid = ?', [uuid]))[0]
      const keyring = keyringOf(t.config)
      const sealed = await stored()
      expect(String(sealed.ciphertext)).not.toContain(secret)
      expect(open(keyring, { ciphertext: String(sealed.ciphertext), keyId: String(sealed.keyId) }, webhookSecretContext(uuid))).toBe(secret)
      const put = (body: Record<string, unknown>) => http('PUT', `/api/v1/workflows/${uuid}`, { token: alice.token, body })
      expect((await put({ name: 'Signed still' })).body.data.has_webhook_secret).toBe(true)
      expect(await stored()).toEqual(sealed)
      expect((await put({ webhook_secret: 'another-secret-of-alice' })).body.data.has_webhook_secret).toBe(true)
      const replaced = await stored()
      expect(open(keyring, { ciphertext: String(replaced.ciphertext), keyId: String(replaced.keyId) }, webhookSecretContext(uuid))).toBe(
        'another-secret-of-alice',
      )
      expect((await put({ webhook_secret: null })).body.data.has_webhook_secret).toBe(false)
      expect(await stored()).toEqual({ ciphertext: null, keyId: null })
      expect((await make(alice)).has_webhook_secret).toBe(false)
    })

    it('answers 401 without a token and 403 to a read-only token, creating nothing', async () => {
      expectErrorBody(await http('POST', '/api/v1/workflows', { body: { name: 'Nope' } }), 401, 'UNAUTHORIZED')
      const reader = await readOnlyToken(t, alice)
      expectErrorBody(await http('POST', '/api/v1/workflows', { token: reader.token, body: { name: 'Nope' } }), 403, 'FORBIDDEN')
      expect(await t.sql("select 1 from workflows where name = 'Nope'")).toHaveLength(0)
    })
  })

  describe('workflows.retrieve (GET /api/v1/workflows/{workflow_uuid})', () => {
    it('shows a workspace-visible workflow to a member, not a private one; is_owner is false for them', async () => {
      const shared = await make(alice, { name: 'Team flow', visibility: 'workspace' })
      const secret = await make(alice, { name: 'Secret flow' })
      // Workspace visibility holds in that workspace's context (docs/api/tenancy.md).
      const inTeam = { 'x-workspace-uuid': alice.workspaceUuid }
      const res = await http('GET', `/api/v1/workflows/${shared.uuid}`, { token: carol.token, headers: inTeam })
      expect(res.status).toBe(200)
      expect(res.body.data).toMatchObject({ uuid: shared.uuid, is_owner: false, user: { id: alice.id } })
      expectHidden(await http('GET', `/api/v1/workflows/${secret.uuid}`, { token: carol.token, headers: inTeam }), secret)
      expectHidden(await http('GET', `/api/v1/workflows/${shared.uuid}`, { token: carol.token }), shared)
    })

    it("answers 404 for another tenant's private workflow, saying nothing of it; public ones are visible", async () => {
      const secret = await make(alice, { name: 'Quarterly close' })
      expectHidden(await http('GET', `/api/v1/workflows/${secret.uuid}`, { token: bob.token }), secret)
      const open = await make(alice, { name: 'Open flow', visibility: 'public' })
      expect((await http('GET', `/api/v1/workflows/${open.uuid}`, { token: bob.token })).body.data.is_owner).toBe(false)
    })

    it('answers a shared workflow to the user it is shared with', async () => {
      const wf = await make(alice, { name: 'Shared read' })
      await share(wf.uuid, 'user', bob.id, 'read')
      expect((await http('GET', `/api/v1/workflows/${wf.uuid}`, { token: bob.token })).status).toBe(200)
    })

    it('answers 404 for an unknown uuid, 400 for a malformed one, 401 without a token', async () => {
      expectErrorBody(await http('GET', '/api/v1/workflows/01234567-89ab-4def-8123-456789abcdef', { token: alice.token }), 404, 'NOT_FOUND')
      expectInvalid(await http('GET', '/api/v1/workflows/0123-abcd', { token: alice.token }), 'workflow_uuid')
      expectErrorBody(await http('GET', `/api/v1/workflows/${(await make(alice)).uuid}`), 401, 'UNAUTHORIZED')
    })
  })

  describe('workflows.update (PUT /api/v1/workflows/{workflow_uuid})', () => {
    const put = (user: { token: string }, uuid: string, body: Record<string, unknown>, headers?: Record<string, string>) =>
      http('PUT', `/api/v1/workflows/${uuid}`, { token: user.token, body, headers })

    it('keeps omitted fields, changes sent ones, and answers the whole workflow', async () => {
      const wf = await make(alice, { description: 'Before', nodes: NODES, edges: EDGES, settings: { a: 1 }, category_uuids: [categories[2].uuid] })
      const res = await put(alice, wf.uuid, { name: 'Renamed', is_active: true })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(Object.keys(res.body.data).sort()).toEqual(WORKFLOW_KEYS)
      expect(res.body.data).toMatchObject({
        name: 'Renamed',
        is_active: true,
        description: 'Before',
        nodes: NODES,
        edges: EDGES,
        settings: { a: 1 },
        categories: [expect.objectContaining({ uuid: categories[2].uuid })],
      })
      expect(Date.parse(res.body.data.updated_at)).toBeGreaterThanOrEqual(Date.parse(wf.updated_at))
    })

    it('clears profile_photo_key and profile_photo_config with null', async () => {
      const wf = await make(alice, { profile_photo_key: photoKey, profile_photo_config: { emoji: '⚙️' } })
      const res = await put(alice, wf.uuid, { profile_photo_key: null, profile_photo_config: null })
      expect(res.body.data).toMatchObject({ profile_photo_url: null, profile_photo_config: {} })
    })

    it('replaces nodes, edges, settings, static_data, pin_data and category_uuids whole when sent', async () => {
      const wf = await make(alice, {
        nodes: NODES,
        edges: EDGES,
        settings: { timeout_seconds: 30, error_policy: 'stop' },
        static_data: { a: 1, b: 2 },
        pin_data: { fetch: [1] },
        category_uuids: [categories[0].uuid, categories[1].uuid],
      })
      const nodes = [{ id: 'only', type: 'webhook_trigger' }]
      const res = await put(alice, wf.uuid, {
        nodes,
        edges: [],
        settings: { timeout_seconds: 5 },
        static_data: {},
        pin_data: { only: ['x'] },
        category_uuids: [categories[3].uuid],
      })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.data).toMatchObject({ nodes, edges: [], settings: { timeout_seconds: 5 }, static_data: {}, pin_data: { only: ['x'] } })
      expect(res.body.data.categories.map((c: { uuid: string }) => c.uuid)).toEqual([categories[3].uuid])
      const cleared = await put(alice, wf.uuid, { category_uuids: [] })
      expect(cleared.body.data.categories).toEqual([])
    })

    it('checks new edges against the stored nodes, and stored edges against new nodes', async () => {
      const wf = await make(alice, { nodes: NODES, edges: EDGES })
      const ok = await put(alice, wf.uuid, { edges: [{ id: 'e2', source: 'start', target: 'fetch' }] })
      expect(ok.status).toBe(200)
      expect(ok.body.data.edges).toEqual([{ id: 'e2', source: 'start', target: 'fetch' }])
      expectInvalid(await put(alice, wf.uuid, { edges: [{ source: 'start', target: 'fetch' }, { source: 'start', target: 'gone' }] }), 'edges.1.target')
      const orphaning = await put(alice, wf.uuid, { nodes: [{ id: 'start', type: 'manual_trigger' }] })
      expectInvalid(orphaning, 'edges.0.target')
      const together = await put(alice, wf.uuid, { nodes: [{ id: 'start', type: 'manual_trigger' }], edges: [] })
      expect(together.status).toBe(200)
    })

    it('changes nothing when any part of the update is invalid (one transaction, checks first)', async () => {
      const wf = await make(alice, { name: 'Stable', nodes: NODES, edges: EDGES, category_uuids: [categories[0].uuid] })
      const before = await rowOf(wf.uuid)
      const bad = [
        { name: 'Changed', category_uuids: [categories[1].uuid, '01234567-89ab-4def-8123-456789abcdef'] },
        { name: 'Changed', nodes: [{ id: 'a', type: 'manual_trigger' }, { id: 'a', type: 'set' }] },
        { name: 'Changed', profile_photo_key: 'missing.png' },
        { name: 'Changed', trigger_count: 9 },
      ]
      for (const body of bad) expect((await put(alice, wf.uuid, body)).status).toBe(400)
      expect(await rowOf(wf.uuid)).toEqual(before)
      expect((await t.as(alice).workflows.retrieve({ workflow_uuid: wf.uuid })).data.categories?.map((c) => c.uuid)).toEqual([categories[0].uuid])
    })

    it.each([
      ['a null name', { name: null }, 'name'],
      ['a null description', { description: null }, 'description'],
      ['a null nodes', { nodes: null }, 'nodes'],
      ['a null visibility', { visibility: null }, 'visibility'],
      ['is_active as "false"', { is_active: 'false' }, 'is_active'],
      ['a duplicate node id', { nodes: [{ id: 'a', type: 'manual_trigger' }, { id: 'a', type: 'set' }] }, 'nodes.1.id'],
    ])('answers 400 naming the field for %s', async (_label, body, path) => {
      const wf = await make(alice)
      expectInvalid(await put(alice, wf.uuid, body), path)
    })

    it("answers 404 for another tenant's workflow and leaves it unchanged", async () => {
      const wf = await make(alice, { name: 'Untouchable' })
      const before = await rowOf(wf.uuid)
      expectHidden(await put(bob, wf.uuid, { name: 'Hijacked' }), wf)
      expect(await rowOf(wf.uuid)).toEqual(before)
    })

    it('answers 403 to a read share and to a member of a workspace-visible workflow; a write share may update', async () => {
      const wf = await make(alice, { name: 'Shared', visibility: 'workspace' })
      await share(wf.uuid, 'user', bob.id, 'read')
      expectErrorBody(await put(bob, wf.uuid, { name: 'By reader' }), 403, 'FORBIDDEN')
      expectErrorBody(await put(carol, wf.uuid, { name: 'By member' }, { 'x-workspace-uuid': alice.workspaceUuid }), 403, 'FORBIDDEN')
      expect((await rowOf(wf.uuid)).name).toBe('Shared')
      const other = await make(alice, { name: 'Writable' })
      await share(other.uuid, 'user', bob.id, 'write')
      const res = await put(bob, other.uuid, { name: 'By writer' })
      expect(res.status).toBe(200)
      expect(res.body.data).toMatchObject({ name: 'By writer', is_owner: false })
    })

    it('answers 401 without a token and 403 to a read-only token, changing nothing', async () => {
      const wf = await make(alice, { name: 'Guarded' })
      expectErrorBody(await http('PUT', `/api/v1/workflows/${wf.uuid}`, { body: { name: 'x' } }), 401, 'UNAUTHORIZED')
      expectErrorBody(await put(await readOnlyToken(t, alice), wf.uuid, { name: 'x' }), 403, 'FORBIDDEN')
      expect((await rowOf(wf.uuid)).name).toBe('Guarded')
    })
  })

  describe('workflows.delete (DELETE /api/v1/workflows/{workflow_uuid})', () => {
    const del = (user: { token: string }, uuid: string, headers?: Record<string, string>) =>
      http('DELETE', `/api/v1/workflows/${uuid}`, { token: user.token, headers })

    it('soft-deletes: 204 without a body, then 404 everywhere, the row kept with deleted_at', async () => {
      const wf = await make(alice, { name: 'Doomed' })
      const res = await del(alice, wf.uuid)
      expect(res.status).toBe(204)
      expect(res.body).toBeNull()
      expect((await rowOf(wf.uuid)).deleted_at).not.toBeNull()
      expectHidden(await http('GET', `/api/v1/workflows/${wf.uuid}`, { token: alice.token }), wf)
      expectHidden(await del(alice, wf.uuid), wf)
      expectHidden(await http('PUT', `/api/v1/workflows/${wf.uuid}`, { token: alice.token, body: { name: 'Back' } }), wf)
      const list = await t.as(alice).workflows.list({ search: 'Doomed' })
      expect(list.data).toEqual([])
    })

    it('lets the workspace owner delete a member\'s private workflow in her workspace', async () => {
      const wf = await make(carol, { name: 'Carol private', workspace_uuid: alice.workspaceUuid })
      expect((await del(alice, wf.uuid)).status).toBe(204)
    })

    it('answers 403 below admin (read or write share, a member), 204 with an admin share', async () => {
      const wf = await make(alice, { name: 'Admin only', visibility: 'workspace' })
      await share(wf.uuid, 'user', bob.id, 'write')
      expectErrorBody(await del(bob, wf.uuid), 403, 'FORBIDDEN')
      expectErrorBody(await del(carol, wf.uuid, { 'x-workspace-uuid': alice.workspaceUuid }), 403, 'FORBIDDEN')
      expect((await rowOf(wf.uuid)).deleted_at).toBeNull()
      const other = await make(alice, { name: 'Admin shared' })
      await share(other.uuid, 'user', bob.id, 'admin')
      expect((await del(bob, other.uuid)).status).toBe(204)
    })

    it("answers 404 for another tenant's workflow, 401 without a token, 403 to a read-only token; nothing deleted", async () => {
      const wf = await make(alice, { name: 'Survivor' })
      expectHidden(await del(bob, wf.uuid), wf)
      expectErrorBody(await http('DELETE', `/api/v1/workflows/${wf.uuid}`), 401, 'UNAUTHORIZED')
      expectErrorBody(await del(await readOnlyToken(t, alice), wf.uuid), 403, 'FORBIDDEN')
      expect((await rowOf(wf.uuid)).deleted_at).toBeNull()
    })

    it('answers 400 naming workflow_uuid for a malformed uuid', async () => {
      expectInvalid(await del(alice, '0123-abcd'), 'workflow_uuid')
    })
  })

  describe('workflows.favorite / unfavorite (POST/DELETE /api/v1/workflows/{workflow_uuid}/favorite)', () => {
    it('adds (204, idempotent) and removes (204, idempotent); is_favorite follows, per caller', async () => {
      const wf = await make(alice, { name: 'Loved', visibility: 'workspace' })
      const path = `/api/v1/workflows/${wf.uuid}/favorite`
      for (let i = 0; i < 2; i += 1) {
        const res = await http('POST', path, { token: alice.token })
        expect(res.status).toBe(204)
        expect(res.body).toBeNull()
      }
      expect(await t.sql("select 1 from favorites where resource_type = 'workflows' and user_id = ?", [alice.id])).toHaveLength(1)
      expect((await t.as(alice).workflows.retrieve({ workflow_uuid: wf.uuid })).data.is_favorite).toBe(true)
      expect((await t.as(carol).workflows.retrieve({ workflow_uuid: wf.uuid, workspace_uuid: alice.workspaceUuid })).data.is_favorite).toBe(false)
      for (let i = 0; i < 2; i += 1) expect((await http('DELETE', path, { token: alice.token })).status).toBe(204)
      expect((await t.as(alice).workflows.retrieve({ workflow_uuid: wf.uuid })).data.is_favorite).toBe(false)
    })

    it('needs only read access: a member and a read share may favourite', async () => {
      const wf = await make(alice, { name: 'Readable', visibility: 'workspace' })
      await share(wf.uuid, 'user', bob.id, 'read')
      await t.as(carol).workflows.favorite({ workflow_uuid: wf.uuid, workspace_uuid: alice.workspaceUuid })
      expect((await http('POST', `/api/v1/workflows/${wf.uuid}/favorite`, { token: bob.token })).status).toBe(204)
    })

    it("answers 404 for another tenant's workflow, 401 without a token, 403 to a read-only token", async () => {
      const wf = await make(alice, { name: 'Not yours' })
      expectHidden(await http('POST', `/api/v1/workflows/${wf.uuid}/favorite`, { token: bob.token }), wf)
      expectHidden(await http('DELETE', `/api/v1/workflows/${wf.uuid}/favorite`, { token: bob.token }), wf)
      expectErrorBody(await http('POST', `/api/v1/workflows/${wf.uuid}/favorite`), 401, 'UNAUTHORIZED')
      expectStatus(await http('POST', `/api/v1/workflows/${wf.uuid}/favorite`, { token: (await readOnlyToken(t, alice)).token }), 403, 'FORBIDDEN')
      expect(await t.sql("select 1 from favorites f join workflows w on w.id = f.resource_id where w.uuid = ?", [wf.uuid])).toHaveLength(0)
    })

    it("unfavorite: 404 for another tenant's workflow, 401 without a token, 403 to a read-only token; the owner's favourite kept", async () => {
      const wf = await make(alice, { name: 'Kept favourite' })
      const path = `/api/v1/workflows/${wf.uuid}/favorite`
      expect((await http('POST', path, { token: alice.token })).status).toBe(204)
      const favourites = () => t.sql("select f.user_id from favorites f join workflows w on w.id = f.resource_id where f.resource_type = 'workflows' and w.uuid = ?", [wf.uuid])
      const before = await favourites()
      expect(before).toHaveLength(1)
      expectHidden(await http('DELETE', path, { token: bob.token }), wf)
      expectErrorBody(await http('DELETE', path), 401, 'UNAUTHORIZED')
      expectStatus(await http('DELETE', path, { token: (await readOnlyToken(t, alice)).token }), 403, 'FORBIDDEN')
      expect(await favourites()).toEqual(before)
    })

    it('answers 400 naming workflow_uuid for a malformed uuid, on both verbs', async () => {
      expectInvalid(await http('POST', '/api/v1/workflows/0123-abcd/favorite', { token: alice.token }), 'workflow_uuid')
      expectInvalid(await http('DELETE', '/api/v1/workflows/0123-abcd/favorite', { token: alice.token }), 'workflow_uuid')
    })
  })
})
