/**
 * The audit log (docs/api/audit.md; routers/audit.router.ts, src/audit/, src/access/audit.ts):
 * events written by the transactions of their changes (none for a change that rolled back, and a
 * change whose event cannot be written rolls back), with actor, request id, address, user agent
 * and redacted field changes; the list with every filter and its validation, retrieve, the NDJSON
 * export, roles (owners and admins only), tenancy, immutability and the retention sweep.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { expectErrorBody, ISO, UUID } from './helpers/expect.ts'
import { expectNamed, readOnlyToken } from './helpers/agents.ts'

const EVENT_KEYS = ['action', 'actor', 'changes', 'ip', 'occurred_at', 'request_id', 'resource', 'user_agent', 'uuid', 'workspace_uuid']

type Event = {
  uuid: string
  action: string
  actor: { type: string; user: { id: number; name: string } | null; token_kind: string | null; token_uuid: string | null }
  workspace_uuid: string | null
  resource: { type: string; uuid: string | null; id: number | null } | null
  request_id: string | null
  ip: string | null
  user_agent: string | null
  changes: Record<string, { from: unknown; to: unknown }> | null
  occurred_at: string
}

describe('audit log', () => {
  let t: TestApp
  let owner: TestUser
  let admin: TestUser
  let member: TestUser
  let stranger: TestUser

  beforeAll(async () => {
    t = await createTestApp()
    owner = await t.make.user({ name: 'Olive Owner' })
    admin = await t.make.user()
    member = await t.make.user()
    stranger = await t.make.user()
    await t.make.member(owner.workspaceUuid, owner, admin, 'admin')
    await t.make.member(owner.workspaceUuid, owner, member, 'member')
  })
  afterAll(async () => {
    await t?.close()
  })

  /** The events of the owner's workspace matching `query`, as the owner lists them. */
  const events = async (query: string, user: { token: string } = owner): Promise<{ data: Event[]; meta: { total: number } }> => {
    const res = await t.http('GET', `/api/v1/audit-events?per_page=100&${query}`, { token: user.token })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return res.body
  }

  const createAgent = async (body: Record<string, unknown>, headers: Record<string, string> = {}) => {
    const res = await t.http('POST', '/api/v1/agents', { token: owner.token, body: { name: 'Audited', ...body }, headers })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body.data as { uuid: string; name: string }
  }

  it('records a create, an update and a delete with actor, request, address, user agent and the fields changed', async () => {
    const agent = await createAgent({ instruction: 'Be brief.' }, { 'user-agent': 'audit-test/1.0', 'x-request-id': 'req-audit-create' })
    await t.http('PUT', `/api/v1/agents/${agent.uuid}`, {
      token: owner.token,
      body: { name: 'Audited again', instruction: 'Be briefer.' },
      headers: { 'x-request-id': 'req-audit-update' },
    })
    expect((await t.http('DELETE', `/api/v1/agents/${agent.uuid}`, { token: owner.token })).status).toBe(204)
    const token = await t.http('GET', '/api/v1/user/token', { token: owner.token })

    const { data, meta } = await events(`resource_uuid=${agent.uuid}`)
    expect(meta.total).toBe(3)
    expect(data.map((event) => event.action)).toEqual(['agent.delete', 'agent.update', 'agent.create'])
    const [deleted, updated, created] = data
    expect(Object.keys(created).sort()).toEqual(EVENT_KEYS)
    expect(created.uuid).toMatch(UUID)
    expect(created.occurred_at).toMatch(ISO)
    expect(created.actor).toEqual({
      type: 'user',
      user: { id: owner.id, name: 'Olive Owner' },
      token_kind: 'basic',
      token_uuid: token.body.data.uuid,
    })
    expect(created.workspace_uuid).toBe(owner.workspaceUuid)
    expect(created.resource).toEqual({ type: 'agent', uuid: agent.uuid, id: null })
    expect(created.request_id).toBe('req-audit-create')
    expect(created.user_agent).toBe('audit-test/1.0')
    expect(created.ip).toMatch(/127\.0\.0\.1|::1/)
    expect(created.changes?.name).toEqual({ from: null, to: 'Audited' })
    expect(created.changes?.instruction).toEqual({ from: null, to: 'Be brief.' })
    expect(updated.request_id).toBe('req-audit-update')
    expect(updated.changes).toEqual({
      name: { from: 'Audited', to: 'Audited again' },
      instruction: { from: 'Be brief.', to: 'Be briefer.' },
    })
    expect(deleted.changes).toBeNull()

    // Retrieve answers the same event.
    const one = await t.http('GET', `/api/v1/audit-events/${updated.uuid}`, { token: owner.token })
    expect(one.status).toBe(200)
    expect(one.body.data).toEqual(updated)
  })

  it('writes no event for a change that rolled back, and rolls a change back when its event cannot be written', async () => {
    const filler = (prefix: string) => Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`${prefix}${i}`, 'x'.repeat(9_000)]))
    const agent = await createAgent({ metadata: filler('a') })
    // Over 64 KiB after merging: refused inside the update's transaction.
    const refused = await t.http('PUT', `/api/v1/agents/${agent.uuid}`, { token: owner.token, body: { metadata: filler('b') } })
    expectNamed(refused, 'metadata')
    expect((await events(`resource_uuid=${agent.uuid}`)).data.map((event) => event.action)).toEqual(['agent.create'])

    // A database that refuses this agent's events: the update goes with its event.
    await t.sql(`create or replace function audit_refuse() returns trigger language plpgsql as $$
      begin
        if new.resource_uuid = '${agent.uuid}'::uuid then raise exception 'audit write refused'; end if;
        return new;
      end $$`)
    await t.sql(`create trigger audit_refuse before insert on audit_events for each row execute function audit_refuse()`)
    try {
      const failed = await t.http('PUT', `/api/v1/agents/${agent.uuid}`, { token: owner.token, body: { name: 'Never stored' } })
      expect(failed.status).toBe(500)
      expect(JSON.stringify(failed.body)).not.toContain('audit write refused')
    } finally {
      await t.sql('drop trigger audit_refuse on audit_events')
      await t.sql('drop function audit_refuse()')
    }
    const stored = await t.http('GET', `/api/v1/agents/${agent.uuid}`, { token: owner.token })
    expect(stored.body.data.name).toBe('Audited')
    expect((await events(`resource_uuid=${agent.uuid}`)).data).toHaveLength(1)
  })

  it('redacts secrets: passwords, tokens and signing secrets never reach the log', async () => {
    const created = await t.http('POST', '/api/v1/access-tokens', { token: owner.token, body: { name: 'CI' } })
    expect(created.status).toBe(201)
    const plaintext = created.body.data.access_token as string
    const endpoint = await t.http('POST', '/api/v1/webhook-endpoints', {
      token: owner.token,
      body: { url: 'https://hooks.example.com/in', event_types: ['run.succeeded'] },
    })
    expect(endpoint.status).toBe(201)
    const secret = endpoint.body.data.secret as string
    const signedUp = await t.http('POST', '/api/v1/auth/sign-up', {
      body: { name: 'Sam Secret', email: 'sam.secret@example.com', password: 'correct horse battery staple' },
    })
    expect(signedUp.status).toBe(201)

    const hook = (await events('action=webhook_endpoint.create')).data[0]
    expect(hook.changes?.secret).toEqual({ from: null, to: '[redacted]' })
    expect(hook.changes?.url).toEqual({ from: null, to: 'https://hooks.example.com/in' })
    const token = (await events('action=access_token.create')).data[0]
    expect(token.resource).toEqual({ type: 'access_token', uuid: created.body.data.uuid, id: null })
    const samToken = signedUp.body.data.access_token as string
    const samUser = await t.http('GET', '/api/v1/user', { token: samToken })
    const samWorkspace = samUser.body.data.primary_workspace.uuid as string
    const signUp = (await events('action=auth.sign_up', { token: samToken })).data[0]
    expect(signUp.workspace_uuid).toBe(samWorkspace)
    expect(signUp.changes?.password).toEqual({ from: null, to: '[redacted]' })

    // Secret-named keys inside a value, in any spelling.
    const agent = await createAgent({ metadata: { apiKey: 'sk-live-in-metadata', 'x-auth-token': 'tok-in-metadata', team: 'ops' } })
    const [withSecrets] = (await events(`resource_uuid=${agent.uuid}`)).data
    expect(withSecrets.changes?.metadata).toEqual({ from: null, to: { apiKey: '[redacted]', 'x-auth-token': '[redacted]', team: 'ops' } })

    const stored = JSON.stringify(await t.sql('select * from audit_events'))
    for (const value of [plaintext, secret, 'correct horse battery staple', samToken, 'sk-live-in-metadata', 'tok-in-metadata']) expect(stored).not.toContain(value)
  })

  it('records sign-in, failed sign-in and logout in the primary workspace; a failed sign-in of an unknown e-mail in none', async () => {
    const user = await t.make.user()
    const failed = await t.http('POST', '/api/v1/auth/sign-in', { body: { email: user.email, password: 'wrong password' } })
    expect(failed.status).toBe(401)
    const unknown = await t.http('POST', '/api/v1/auth/sign-in', {
      body: { email: 'nobody.here@example.com', password: 'whatever-it-is' },
      headers: { 'x-request-id': 'req-unknown-sign-in' },
    })
    expect(unknown.status).toBe(401)
    const signedIn = await t.http('POST', '/api/v1/auth/sign-in', { body: { email: user.email, password: user.password } })
    expect(signedIn.status).toBe(200)
    const session = signedIn.body.data.access_token as string
    expect((await t.http('POST', '/api/v1/auth/logout', { token: session })).status).toBe(204)

    const { data } = await events('action=auth.*', user)
    expect(data.map((event) => event.action)).toEqual(['auth.logout', 'auth.sign_in', 'auth.sign_in_failed', 'auth.sign_in', 'auth.sign_up'])
    const [logout, signIn, failure] = data
    for (const event of data) expect(event.workspace_uuid).toBe(user.workspaceUuid)
    expect(signIn.actor.user?.id).toBe(user.id)
    expect(signIn.actor.token_kind).toBe('basic')
    expect(logout.actor.token_uuid).toBe(signIn.actor.token_uuid)
    expect(failure.actor).toEqual({ type: 'user', user: { id: user.id, name: expect.any(String) }, token_kind: null, token_uuid: null })

    // Kept, listed nowhere.
    const [kept] = await t.sql(`select workspace_id, action from audit_events where request_id = 'req-unknown-sign-in'`)
    expect(kept).toEqual({ workspace_id: null, action: 'auth.sign_in_failed' })
    expect(JSON.stringify((await events('action=auth.sign_in_failed')).data)).not.toContain('req-unknown-sign-in')
  })

  it('records member, workspace, share and favourite changes with their fields', async () => {
    const workspace = await t.make.workspace(owner, { name: 'Audited team' })
    const headers = { 'x-workspace-uuid': workspace.uuid }
    const joiner = await t.make.user()
    await t.make.member(workspace, owner, joiner)
    await t.http('PUT', `/api/v1/workspaces/${workspace.uuid}/members/${joiner.id}`, { token: owner.token, body: { role: 'admin' } })
    await t.http('DELETE', `/api/v1/workspaces/${workspace.uuid}/members/${joiner.id}`, { token: owner.token })
    const members = await t.http('GET', '/api/v1/audit-events?resource_type=member', { token: owner.token, headers })
    expect(members.body.data.map((event: Event) => [event.action, event.resource?.id, event.changes?.role])).toEqual([
      ['member.remove', joiner.id, { from: 'admin', to: null }],
      ['member.update', joiner.id, { from: 'member', to: 'admin' }],
      ['member.add', joiner.id, { from: null, to: 'member' }],
    ])
    const created = await t.http('GET', '/api/v1/audit-events?action=workspace.create', { token: owner.token, headers })
    expect(created.body.data[0].changes.name).toEqual({ from: null, to: 'Audited team' })

    const agent = await createAgent({})
    await t.http('POST', `/api/v1/agents/${agent.uuid}/share`, {
      token: owner.token,
      body: { entity_type: 'user', entity_id: stranger.id, permission: 'read' },
    })
    await t.http('POST', `/api/v1/agents/${agent.uuid}/favorite`, { token: owner.token })
    // Again: no change, no event.
    await t.http('POST', `/api/v1/agents/${agent.uuid}/favorite`, { token: owner.token })
    await t.http('DELETE', `/api/v1/agents/${agent.uuid}/favorite`, { token: owner.token })
    const { data } = await events(`resource_uuid=${agent.uuid}`)
    expect(data.map((event) => event.action)).toEqual(['agent.unfavorite', 'agent.favorite', 'agent.share', 'agent.create'])
    expect(data[2].changes).toEqual({ [`shares.user.${stranger.id}`]: { from: null, to: 'read' } })
  })

  it('filters by action (exact or prefix), actor, resource type and uuid, and dates', async () => {
    const agent = await createAgent({})
    const byTheAdmin = await t.http('PUT', `/api/v1/agents/${agent.uuid}`, {
      token: admin.token,
      body: { description: 'by the admin' },
      headers: { 'x-workspace-uuid': owner.workspaceUuid },
    })
    expect(byTheAdmin.status).toBe(200)

    const exact = await events('action=agent.update')
    expect(exact.data.every((event) => event.action === 'agent.update')).toBe(true)
    const prefix = await events('action=agent.*')
    expect(prefix.data.length).toBeGreaterThan(exact.data.length)
    expect(prefix.data.every((event) => event.action.startsWith('agent.'))).toBe(true)
    const tokens = await events('action=access_token.*')
    expect(tokens.data.every((event) => event.action.startsWith('access_token.'))).toBe(true)
    const byAdmin = await events(`actor_user_id=${admin.id}`)
    expect(byAdmin.data.length).toBeGreaterThan(0)
    expect(byAdmin.data.every((event) => event.actor.user?.id === admin.id)).toBe(true)
    expect((await events('resource_type=agent')).data.every((event) => event.resource?.type === 'agent')).toBe(true)

    const today = new Date().toISOString().slice(0, 10)
    const all = await events('')
    expect((await events(`date_from=${today}&date_to=${today}`)).meta.total).toBe(all.meta.total)
    expect((await events('date_to=2020-01-01')).meta.total).toBe(0)
    expect((await events('date_from=2099-01-01')).meta.total).toBe(0)
    // Newest first.
    const times = all.data.map((event) => event.occurred_at)
    expect([...times].sort().reverse()).toEqual(times)
  })

  it('refuses bad filters with a 400 naming the field', async () => {
    for (const [query, field] of [
      ['action=Agent!', 'action'],
      ['action=agent.', 'action'],
      ['actor_user_id=abc', 'actor_user_id'],
      ['actor_user_id=0', 'actor_user_id'],
      ['resource_type=Agent', 'resource_type'],
      ['resource_uuid=not-a-uuid', 'resource_uuid'],
      ['date_from=2026-02-30', 'date_from'],
      ['date_from=2026-03-02&date_to=2026-03-01', 'date_from'],
      ['per_page=1000', 'per_page'],
      ['colour=blue', 'colour'],
    ]) {
      expectNamed(await t.http('GET', `/api/v1/audit-events?${query}`, { token: owner.token }), field)
      const exported = await t.http('GET', `/api/v1/audit-events/export?${query}`, { token: owner.token })
      if (field !== 'per_page') expectNamed(exported, field)
    }
    expectNamed(await t.http('GET', '/api/v1/audit-events/0000-1111', { token: owner.token }), 'audit_event_uuid')
  })

  it('is for owners and admins only, of their own workspace; read-only tokens may read it', async () => {
    const [ownerEvent] = (await events('action=agent.create')).data
    expect((await t.http('GET', '/api/v1/audit-events', {})).status).toBe(401)
    expect((await t.http('GET', '/api/v1/audit-events/export', {})).status).toBe(401)
    for (const path of ['/api/v1/audit-events', `/api/v1/audit-events/${ownerEvent.uuid}`, '/api/v1/audit-events/export']) {
      const refused = await t.http('GET', path, { token: member.token, headers: { 'x-workspace-uuid': owner.workspaceUuid } })
      expectErrorBody(refused, 403, 'FORBIDDEN')
    }
    const asAdmin = await t.http('GET', '/api/v1/audit-events', { token: admin.token, headers: { 'x-workspace-uuid': owner.workspaceUuid } })
    expect(asAdmin.status).toBe(200)
    expect(asAdmin.body.meta.total).toBeGreaterThan(0)
    const readOnly = await readOnlyToken(t, owner)
    expect((await t.http('GET', '/api/v1/audit-events', { token: readOnly.token })).status).toBe(200)

    // Another tenant: its events are not found, and its workspace is no context of theirs.
    const hidden = await t.http('GET', `/api/v1/audit-events/${ownerEvent.uuid}`, { token: stranger.token })
    expectErrorBody(hidden, 404, 'NOT_FOUND')
    expect(JSON.stringify(hidden.body)).not.toContain(ownerEvent.uuid)
    const elsewhere = await t.http('GET', '/api/v1/audit-events', { token: stranger.token, headers: { 'x-workspace-uuid': owner.workspaceUuid } })
    expect(elsewhere.status).toBe(404)
    const own = await t.http('GET', '/api/v1/audit-events?per_page=100', { token: stranger.token })
    expect(JSON.stringify(own.body)).not.toContain(owner.workspaceUuid)
  })

  it('changes and deletes no event: no such operation, and the table refuses updates', async () => {
    const [event] = (await events('')).data
    for (const method of ['PUT', 'PATCH', 'DELETE']) {
      const res = await t.http(method, `/api/v1/audit-events/${event.uuid}`, { token: owner.token, body: {} })
      expect(res.status).toBe(405)
    }
    await expect(t.sql(`update audit_events set action = 'agent.nothing' where uuid = ?`, [event.uuid])).rejects.toThrow(/not changed/)
    expect((await t.http('GET', `/api/v1/audit-events/${event.uuid}`, { token: owner.token })).body.data).toEqual(event)
  })

  it('exports every matching event as NDJSON, newest first, past one batch', async () => {
    const workspace = await t.make.workspace(owner, { name: 'Export me' })
    const [row] = await t.sql(`select id::float8 as id from workspaces where uuid = ?`, [workspace.uuid])
    // 2,500 events, written as the service writes them (the export reads 1,000 per statement).
    await t.sql(
      `insert into audit_events (uuid, occurred_at, action, actor_type, actor_user_id, workspace_id, resource_type, resource_uuid, changes)
       select gen_random_uuid(), now() - make_interval(secs => 2500 - g), case when g % 2 = 0 then 'prompt.update' else 'tool.update' end,
         'user', ?, ?, 'prompt', gen_random_uuid(), jsonb_build_object('n', jsonb_build_object('from', g - 1, 'to', g))
       from generate_series(1, 2500) g`,
      [owner.id, row.id],
    )
    const headers = { 'x-workspace-uuid': workspace.uuid }
    const res = await fetch(`${t.url}/api/v1/audit-events/export?action=prompt.update`, {
      headers: { authorization: `Bearer ${owner.token}`, ...headers },
    })
    expect(res.status).toBe(200)
    expect(res.headers.get('content-type')).toMatch(/^application\/x-ndjson/)
    const lines = (await res.text()).split('\n')
    expect(lines.pop()).toBe('')
    const exported = lines.map((line) => JSON.parse(line) as Event)
    expect(exported).toHaveLength(1250)
    expect(exported.every((event) => event.action === 'prompt.update' && Object.keys(event).sort().join() === EVENT_KEYS.join())).toBe(true)
    expect(exported[0].changes?.n).toEqual({ from: 2499, to: 2500 })
    expect(exported.at(-1)?.changes?.n).toEqual({ from: 1, to: 2 })
    const listed = await t.http('GET', '/api/v1/audit-events?action=prompt.update&per_page=5', { token: owner.token, headers })
    expect(listed.body.meta.total).toBe(1250)
    expect(listed.body.data).toEqual(exported.slice(0, 5))
    const everything = await fetch(`${t.url}/api/v1/audit-events/export`, { headers: { authorization: `Bearer ${owner.token}`, ...headers } })
    // The workspace's own creation is an event of it too.
    expect((await everything.text()).trim().split('\n')).toHaveLength(2501)
  })

  it('sweeps events older than AUDIT_RETENTION_DAYS, and only those', async () => {
    const [row] = await t.sql(`select id::float8 as id from workspaces where uuid = ?`, [owner.workspaceUuid])
    await t.sql(
      `insert into audit_events (uuid, occurred_at, action, actor_type, workspace_id, request_id)
       values (gen_random_uuid(), now() - interval '400 days', 'agent.update', 'system', ?, 'req-too-old'),
              (gen_random_uuid(), now() - interval '300 days', 'agent.update', 'system', ?, 'req-old-enough')`,
      [row.id, row.id],
    )
    await t.runtime.scheduler.fireDue()
    const left = await t.sql(`select request_id from audit_events where request_id in ('req-too-old', 'req-old-enough')`)
    expect(left).toEqual([{ request_id: 'req-old-enough' }])
  })
})
