/**
 * The request's workspace context (docs/api/tenancy.md; src/access/workspace-access.ts):
 * `X-Workspace-UUID` header, else the input's `workspace_uuid`, else the token's bound workspace,
 * else the caller's primary workspace; the caller must be a member (else 404). Tested on the
 * function with a real context, and through `workspaceProcedure` on a router built here (no
 * application router uses it yet).
 */
import { randomUUID } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import { TRPCError } from '@trpc/server'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import { resolveWorkspaceContext } from '../src/access/workspace-access.ts'
import { NotFoundError, ValidationError } from '../src/platform/errors.ts'
import type { TWorkspace } from '../src/access/user-workspace.schema.ts'
import { authenticate } from '../src/tenancy/auth.service.ts'
import { createContextFactory } from '../src/trpc/context.ts'
import { createCallerFactory, router, workspaceProcedure } from '../src/trpc/init.ts'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { ACME_KEY } from './helpers/expect.ts'

describe('resolveWorkspaceContext', () => {
  let t: TestApp
  let alice: TestUser
  let bob: TestUser
  let carol: TestUser
  /** alice owns it; bob is a `member`, carol an `admin`. */
  let team: TWorkspace
  /** alice's second workspace; nobody else is in it. */
  let side: TWorkspace

  beforeAll(async () => {
    t = await createTestApp()
    alice = await t.make.user({ name: 'Alice Context' })
    bob = await t.make.user({ name: 'Bob Context' })
    carol = await t.make.user({ name: 'Carol Context' })
    team = await t.make.workspace(alice, { name: 'Team' })
    side = await t.make.workspace(alice, { name: 'Side' })
    await t.make.member(team, alice, bob, 'member')
    await t.make.member(team, alice, carol, 'admin')
  })
  afterAll(async () => t?.close())

  /** A real request context for `token`, authenticated as `authedProcedure` would. */
  async function contextFor(token: string, headers: IncomingHttpHeaders = {}, serviceId: string | null = null) {
    const ctx = createContextFactory(t.runtime)({
      requestId: randomUUID(),
      ip: '127.0.0.1',
      headers: { authorization: `Bearer ${token}`, ...headers },
      setHeader: () => {},
    })
    ctx.serviceId = serviceId
    const auth = await authenticate(ctx)
    return Object.assign(ctx, { auth })
  }

  /** Resolves and answers `[uuid, role]`. */
  async function resolve(token: string, headers: IncomingHttpHeaders, input: unknown, serviceId: string | null = null) {
    const ctx = await contextFor(token, headers, serviceId)
    const found = await resolveWorkspaceContext(ctx, input)
    return [found.workspace.uuid, found.role]
  }

  /** A token bound to `workspace`, made with alice's sign-in token. */
  async function boundToken(user: TestUser, workspace: { uuid: string }): Promise<string> {
    const created = await t.as(user).accessTokens.create({ name: 'bound', workspace_uuid: workspace.uuid })
    return created.data.access_token
  }

  describe('order of the sources', () => {
    it("falls back to the caller's primary workspace when nothing names one", async () => {
      expect(await resolve(alice.token, {}, undefined)).toEqual([alice.workspaceUuid, 'owner'])
      expect(await resolve(bob.token, {}, undefined)).toEqual([bob.workspaceUuid, 'owner'])
    })

    it('answers the whole workspace row with the role', async () => {
      const ctx = await contextFor(carol.token)
      const found = await resolveWorkspaceContext(ctx, team.uuid)
      expect(found.role).toBe('admin')
      expect(found.workspace).toMatchObject({ uuid: team.uuid, slug: team.slug, name: 'Team', isOnboarded: false, metadata: {} })
      expect(typeof found.workspace.id).toBe('number')
      expect(Number(found.workspace.userId)).toBe(alice.id)
    })

    it("uses the input's workspace_uuid over the primary workspace, with the caller's role there", async () => {
      expect(await resolve(alice.token, {}, team.uuid)).toEqual([team.uuid, 'owner'])
      expect(await resolve(bob.token, {}, team.uuid)).toEqual([team.uuid, 'member'])
      expect(await resolve(carol.token, {}, team.uuid.toUpperCase())).toEqual([team.uuid, 'admin'])
    })

    it('uses the X-Workspace-UUID header over the input and the primary workspace', async () => {
      expect(await resolve(alice.token, { 'x-workspace-uuid': side.uuid }, team.uuid)).toEqual([side.uuid, 'owner'])
      expect(await resolve(alice.token, { 'x-workspace-uuid': team.uuid.toUpperCase() }, undefined)).toEqual([team.uuid, 'owner'])
      expect(await resolve(alice.token, { 'x-workspace-uuid': [side.uuid, team.uuid] }, undefined)).toEqual([side.uuid, 'owner'])
    })

    it('ignores an empty header', async () => {
      expect(await resolve(alice.token, { 'x-workspace-uuid': '' }, team.uuid)).toEqual([team.uuid, 'owner'])
      expect(await resolve(alice.token, { 'x-workspace-uuid': '' }, undefined)).toEqual([alice.workspaceUuid, 'owner'])
    })

    it('ignores an input workspace_uuid that is not a uuid string (the procedure input schema refuses it)', async () => {
      for (const input of ['not-a-uuid', 42, null, { uuid: team.uuid }, [team.uuid]]) {
        expect(await resolve(alice.token, {}, input)).toEqual([alice.workspaceUuid, 'owner'])
      }
    })

    it("uses the token's bound workspace over the primary one, and confines every source to it", async () => {
      const token = await boundToken(alice, side)
      expect(await resolve(token, {}, undefined)).toEqual([side.uuid, 'owner'])
      expect(await resolve(token, {}, side.uuid)).toEqual([side.uuid, 'owner'])
      expect(await resolve(token, { 'x-workspace-uuid': side.uuid }, team.uuid)).toEqual([side.uuid, 'owner'])
      const ctx = await contextFor(token)
      await expect(resolveWorkspaceContext(ctx, team.uuid)).rejects.toBeInstanceOf(NotFoundError)
      await expect(resolveWorkspaceContext(ctx, alice.workspaceUuid)).rejects.toBeInstanceOf(NotFoundError)
      const withHeader = await contextFor(token, { 'x-workspace-uuid': alice.workspaceUuid })
      await expect(resolveWorkspaceContext(withHeader, side.uuid)).rejects.toBeInstanceOf(NotFoundError)
    })
  })

  describe('refusals', () => {
    it('answers a ValidationError naming X-Workspace-UUID for a malformed header, whatever the input', async () => {
      for (const header of ['nope', `${team.uuid}x`, team.uuid.slice(0, 35), ' ']) {
        const ctx = await contextFor(alice.token, { 'x-workspace-uuid': header })
        const error = await resolveWorkspaceContext(ctx, team.uuid).catch((caught: unknown) => caught)
        expect(error).toBeInstanceOf(ValidationError)
        if (!(error instanceof ValidationError)) throw new Error('unreachable')
        expect(error.issues).toEqual([{ code: 'custom', path: ['X-Workspace-UUID'], message: 'X-Workspace-UUID must be a UUID' }])
      }
    })

    it('answers NotFoundError for a workspace the caller is no member of, by header or input, saying nothing of it', async () => {
      for (const [headers, input] of [
        [{ 'x-workspace-uuid': team.uuid }, undefined],
        [{}, team.uuid],
        [{ 'x-workspace-uuid': alice.workspaceUuid }, undefined],
        [{}, randomUUID()],
      ] as const) {
        const outsider = await t.make.user()
        const ctx = await contextFor(outsider.token, headers)
        const error = await resolveWorkspaceContext(ctx, input).catch((caught: unknown) => caught)
        expect(error).toBeInstanceOf(NotFoundError)
        expect(String(error)).not.toContain(team.uuid)
        expect(String(error)).not.toContain(alice.workspaceUuid)
      }
    })

    it('does not fall back to the primary workspace when the named one is not found', async () => {
      const ctx = await contextFor(bob.token, { 'x-workspace-uuid': side.uuid })
      await expect(resolveWorkspaceContext(ctx, bob.workspaceUuid)).rejects.toBeInstanceOf(NotFoundError)
    })

    it('answers NotFoundError once the member is removed, and for a deleted workspace', async () => {
      const user = await t.make.user()
      const ws = await t.make.workspace(alice, { name: 'Temporary' })
      await t.make.member(ws, alice, user, 'admin')
      expect(await resolve(user.token, {}, ws.uuid)).toEqual([ws.uuid, 'admin'])
      await t.as(alice).workspaces.members.remove({ workspace_uuid: ws.uuid, user_id: user.id })
      await expect(resolveWorkspaceContext(await contextFor(user.token), ws.uuid)).rejects.toBeInstanceOf(NotFoundError)

      expect(await resolve(alice.token, { 'x-workspace-uuid': ws.uuid }, undefined)).toEqual([ws.uuid, 'owner'])
      await t.as(alice).workspaces.delete({ workspace_uuid: ws.uuid })
      await expect(
        resolveWorkspaceContext(await contextFor(alice.token, { 'x-workspace-uuid': ws.uuid }), undefined),
      ).rejects.toBeInstanceOf(NotFoundError)
    })

    it('answers NotFoundError when nothing names a workspace and the primary one is gone', async () => {
      const user = await t.make.user()
      const other = await t.make.workspace(user, { name: 'Still Here' })
      await t.sql('update workspaces set deleted_at = now() where uuid = ?', [user.workspaceUuid])
      const ctx = await contextFor(user.token)
      expect(ctx.auth.primaryWorkspace).toBeNull()
      await expect(resolveWorkspaceContext(ctx, undefined)).rejects.toBeInstanceOf(NotFoundError)
      expect((await resolveWorkspaceContext(ctx, other.uuid)).workspace.uuid).toBe(other.uuid)
    })

    it('keeps to the service scope: a membership across scopes does not count', async () => {
      const scoped = await t.make.user({ serviceKey: ACME_KEY })
      expect(await resolve(scoped.token, {}, undefined, 'acme')).toEqual([scoped.workspaceUuid, 'owner'])
      // A membership row across scopes (the API cannot make one) still grants nothing.
      await t.sql(
        `insert into workspace_members (workspace_id, user_id, role, created_at, updated_at)
         select id, ?, 'member', now(), now() from workspaces where uuid = ?`,
        [scoped.id, team.uuid],
      )
      const scopedCtx = await contextFor(scoped.token, { 'x-workspace-uuid': team.uuid }, 'acme')
      await expect(resolveWorkspaceContext(scopedCtx, undefined)).rejects.toBeInstanceOf(NotFoundError)
      await t.sql(
        `insert into workspace_members (workspace_id, user_id, role, created_at, updated_at)
         select id, ?, 'member', now(), now() from workspaces where uuid = ?`,
        [alice.id, scoped.workspaceUuid],
      )
      const aliceCtx = await contextFor(alice.token, {}, null)
      await expect(resolveWorkspaceContext(aliceCtx, scoped.workspaceUuid)).rejects.toBeInstanceOf(NotFoundError)
    })
  })

  describe('through workspaceProcedure', () => {
    const probeRouter = router({
      where: workspaceProcedure
        .input(z.strictObject({ workspace_uuid: z.uuid().optional() }).optional())
        .query(({ ctx }) => ({ uuid: ctx.workspace.workspace.uuid, role: ctx.workspace.role })),
    })
    const createProbeCaller = createCallerFactory(probeRouter)
    const callerFor = (token: string, headers: Record<string, string> = {}) =>
      createProbeCaller(
        createContextFactory(t.runtime)({
          requestId: randomUUID(),
          ip: '127.0.0.1',
          headers: { authorization: `Bearer ${token}`, ...headers },
          setHeader: () => {},
        }),
      )

    it('puts the resolved context on ctx.workspace, in the same order', async () => {
      expect(await callerFor(bob.token).where()).toEqual({ uuid: bob.workspaceUuid, role: 'owner' })
      expect(await callerFor(bob.token).where({ workspace_uuid: team.uuid })).toEqual({ uuid: team.uuid, role: 'member' })
      expect(await callerFor(alice.token, { 'x-workspace-uuid': side.uuid }).where({ workspace_uuid: team.uuid })).toEqual({
        uuid: side.uuid,
        role: 'owner',
      })
    })

    it('maps the refusals to NOT_FOUND and BAD_REQUEST (with the issue), and a missing token to UNAUTHORIZED', async () => {
      await expect(callerFor(bob.token).where({ workspace_uuid: side.uuid })).rejects.toMatchObject({ code: 'NOT_FOUND' })
      const error = await callerFor(bob.token, { 'x-workspace-uuid': 'bad' })
        .where()
        .catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(TRPCError)
      if (!(error instanceof TRPCError)) throw new Error('unreachable')
      expect(error.code).toBe('BAD_REQUEST')
      expect(error.cause).toMatchObject({ issues: [{ path: ['X-Workspace-UUID'] }] })
      const anonymous = createProbeCaller(
        createContextFactory(t.runtime)({ requestId: randomUUID(), ip: '127.0.0.1', headers: {}, setHeader: () => {} }),
      )
      await expect(anonymous.where()).rejects.toMatchObject({ code: 'UNAUTHORIZED' })
    })
  })
})
