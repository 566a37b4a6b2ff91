/**
 * The cases every `POST /api/v1/<resources>/{uuid}/share` answers alike (src/access/shares.ts,
 * src/access/share.schema.ts): the refused bodies and the guards. test/agents-share.test.ts and
 * test/workflows-share.test.ts run them on their resource and then check their own rows.
 */
import { expect } from 'vitest'
import type { TestApp } from './app.ts'
import { expectNamed, readOnlyToken, type Member } from './agents.ts'
import { ACME_KEY, expectStatus } from './expect.ts'

/** A share body granting `user` `permission` (`null` removes the share). */
export const toUser = (user: { id: number }, permission: string | null) => ({ entity_type: 'user', entity_id: user.id, permission })

/** Shares of one resource kind: `path` is the share path of a uuid. */
export interface ShareTarget {
  t: TestApp
  path: (uuid: string) => string
  /** The resource's path parameter, named by a 400 for a malformed uuid (`agent_uuid`). */
  param: string
}

/** A share request as `by` (no token when null). */
export const shareAs = (target: ShareTarget, by: { token: string } | null, uuid: string, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
  target.t.http('POST', target.path(uuid), { token: by?.token, body, headers })

/**
 * `owner` shares resource `uuid` with: an unknown user, a user of another service scope, the
 * owner, a workspace the owner is not in (`other`'s), an unknown workspace, and `entity_id`s of
 * the wrong kind: each a 400 naming `entity_id` that says nothing of `other` (whose name holds
 * `otherName`). Then a bad `entity_type`, `permission`, a missing field, an unknown one and a
 * malformed path uuid: 400s naming them.
 */
export async function expectRefusedShareBodies(target: ShareTarget, uuid: string, owner: Member, other: Member, otherName: string): Promise<void> {
  const scoped = await target.t.make.user({ serviceKey: ACME_KEY })
  const cases: Record<string, unknown>[] = [
    { entity_type: 'user', entity_id: 2_000_000_000, permission: 'read' },
    { entity_type: 'user', entity_id: scoped.id, permission: 'read' },
    { entity_type: 'user', entity_id: owner.id, permission: 'read' },
    { entity_type: 'workspace', entity_id: other.workspaceUuid, permission: 'read' },
    { entity_type: 'workspace', entity_id: crypto.randomUUID(), permission: 'read' },
    { entity_type: 'user', entity_id: other.workspaceUuid, permission: 'read' },
    { entity_type: 'workspace', entity_id: other.id, permission: 'read' },
    { entity_type: 'user', entity_id: '12', permission: 'read' },
    { entity_type: 'user', entity_id: 1.5, permission: 'read' },
    { entity_type: 'user', entity_id: 0, permission: 'read' },
  ]
  for (const body of cases) {
    const res = await shareAs(target, owner, uuid, body)
    expectNamed(res, 'entity_id')
    expect(JSON.stringify(res.body)).not.toContain(otherName)
  }
  const others: [Record<string, unknown>, string][] = [
    [{ entity_type: 'group', entity_id: other.id, permission: 'read' }, 'entity_type'],
    [{ entity_type: 'user', entity_id: other.id, permission: 'owner' }, 'permission'],
    [{ entity_type: 'user', entity_id: other.id }, 'permission'],
    [{ entity_type: 'user', permission: 'read' }, 'entity_id'],
    [{ entity_type: 'user', entity_id: other.id, permission: 'read', note: 'hi' }, 'note'],
  ]
  for (const [body, field] of others) expectNamed(await shareAs(target, owner, uuid, body), field)
  expectNamed(await shareAs(target, owner, '0123-abcd', toUser(other, 'read')), target.param)
}

/**
 * The guards of a share: `stranger` (another tenant) gets a 404 for `owner`'s resource `uuid`
 * that does not show `hiddenWord` (from its name), and for an unknown uuid; no token is a 401;
 * `owner`'s read-only token a 403.
 */
export async function expectShareGuards(target: ShareTarget, uuid: string, owner: Member, stranger: Member, hiddenWord: string): Promise<void> {
  const res = await shareAs(target, stranger, uuid, toUser(stranger, 'admin'))
  expectStatus(res, 404, 'NOT_FOUND')
  expect(JSON.stringify(res.body)).not.toContain(hiddenWord)
  expectStatus(await shareAs(target, stranger, crypto.randomUUID(), toUser(owner, 'read')), 404, 'NOT_FOUND')
  expectStatus(await shareAs(target, null, uuid, toUser(stranger, 'read')), 401, 'UNAUTHORIZED')
  expectStatus(await shareAs(target, await readOnlyToken(target.t, owner), uuid, toUser(stranger, 'read')), 403, 'FORBIDDEN')
}
