/**
 * Visibility, shares and `is_owner` as SQL (src/access/visibility.ts, docs/api/tenancy.md), run on
 * the real database against a table of the shape every tenant-owned resource has
 * (`id, user_id, workspace_id, visibility`) and the real `shares` table.
 *
 * Cast (user ids, workspace ids):
 *   W = 10: user 1 owner, user 2 admin, user 3 member;   X = 20: user 4;   Y = 30: user 5.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import type { SharePermission } from '../entities/index.ts'
import { allows, isOwnerSql, permissionOf, permissionSql, PERMISSION_RANK, visibleSql, type Viewer } from '../src/access/visibility.ts'
import { createTestApp, type TestApp } from './helpers/app.ts'

const W = 10
const X = 20
const Y = 30

/** Rows of `items`: [id, user_id, workspace_id, visibility], with what each one is for. */
const ITEMS: [number, number, number, 'private' | 'workspace' | 'public'][] = [
  [1, 3, W, 'private'], // the member's own private row
  [2, 3, W, 'workspace'], // the member's own workspace row
  [3, 3, W, 'public'], // the member's own public row
  [4, 1, W, 'private'], // the workspace owner's private row
  [5, 4, X, 'private'], // another workspace: private
  [6, 4, X, 'workspace'], // another workspace: workspace-visible
  [7, 4, X, 'public'], // another workspace: public
  [8, 2, W, 'private'], // the admin's private row
  [9, 4, X, 'private'], // shared with user 3: write
  [10, 4, X, 'private'], // shared with workspace W: read
  [11, 4, X, 'private'], // shared with user 3: read, and with workspace W: admin
  [12, 4, X, 'workspace'], // shared with user 5: admin; an `agents` share of the same id is ignored
  [13, 4, X, 'private'], // shared with workspace Y: write, and with user 2: read
  [14, 4, X, 'private'], // cross-wired shares: user 10 and workspace 3 (nobody here)
  [15, 2, W, 'workspace'], // the admin's workspace row
  [16, 1, W, 'public'], // public, also shared with user 3: write
  [17, 4, X, 'workspace'], // shared with workspace W: write
]

/** [resource_type, resource_id, entity_type, entity_id, permission] */
const SHARES: [string, number, 'user' | 'workspace', number, SharePermission][] = [
  ['items', 9, 'user', 3, 'write'],
  ['items', 10, 'workspace', W, 'read'],
  ['items', 11, 'user', 3, 'read'],
  ['items', 11, 'workspace', W, 'admin'],
  ['items', 12, 'user', 5, 'admin'],
  ['agents', 12, 'user', 3, 'admin'],
  ['agents', 5, 'workspace', W, 'admin'],
  ['items', 13, 'workspace', Y, 'write'],
  ['items', 13, 'user', 2, 'read'],
  ['items', 14, 'user', W, 'admin'],
  ['items', 14, 'workspace', 3, 'admin'],
  ['items', 16, 'user', 3, 'write'],
  ['items', 17, 'workspace', W, 'write'],
]

const VIEWERS = {
  ownerOfW: { userId: 1, workspaceId: W, role: 'owner' },
  adminOfW: { userId: 2, workspaceId: W, role: 'admin' },
  memberOfW: { userId: 3, workspaceId: W, role: 'member' },
  memberOfX: { userId: 4, workspaceId: X, role: 'member' },
  outsider: { userId: 5, workspaceId: Y, role: 'owner' },
} satisfies Record<string, Viewer>

type Expected = Record<number, SharePermission>

/** What each viewer may do to each row; rows left out are invisible to them. */
const EXPECTED: Record<keyof typeof VIEWERS, Expected> = {
  ownerOfW: {
    1: 'admin',
    2: 'admin',
    3: 'admin',
    4: 'admin',
    7: 'read',
    8: 'admin',
    10: 'read',
    11: 'admin',
    15: 'admin',
    16: 'admin',
    17: 'write',
  },
  adminOfW: {
    1: 'admin',
    2: 'admin',
    3: 'admin',
    4: 'admin',
    7: 'read',
    8: 'admin',
    10: 'read',
    11: 'admin',
    13: 'read',
    15: 'admin',
    16: 'admin',
    17: 'write',
  },
  memberOfW: { 1: 'admin', 2: 'admin', 3: 'admin', 7: 'read', 9: 'write', 10: 'read', 11: 'admin', 15: 'read', 16: 'write', 17: 'write' },
  memberOfX: {
    3: 'read',
    5: 'admin',
    6: 'admin',
    7: 'admin',
    9: 'admin',
    10: 'admin',
    11: 'admin',
    12: 'admin',
    13: 'admin',
    14: 'admin',
    16: 'read',
    17: 'admin',
  },
  outsider: { 3: 'read', 7: 'read', 12: 'admin', 13: 'write', 16: 'read' },
}

describe('access/visibility on the database', () => {
  let t: TestApp

  beforeAll(async () => {
    t = await createTestApp()
    await t.sql('create table items (id bigserial primary key, user_id int, workspace_id bigint, visibility text)')
    for (const [id, userId, workspaceId, visibility] of ITEMS) {
      await t.sql('insert into items (id, user_id, workspace_id, visibility) values (?, ?, ?, ?)', [id, userId, workspaceId, visibility])
    }
    for (const [resourceType, resourceId, entityType, entityId, permission] of SHARES) {
      await t.sql(
        `insert into shares (resource_type, resource_id, entity_type, entity_id, permission, created_at, updated_at)
         values (?, ?, ?, ?, ?, now(), now())`,
        [resourceType, resourceId, entityType, entityId, permission],
      )
    }
  })
  afterAll(async () => t?.close())

  /** The rows `viewer` sees (visibleSql), each with its permission (permissionSql) and is_owner (isOwnerSql). */
  async function seen(viewer: Viewer): Promise<Record<number, { permission: SharePermission | null; isOwner: boolean }>> {
    const permission = permissionSql('i', 'items', viewer)
    const owner = isOwnerSql('i', viewer)
    const visible = visibleSql('i', 'items', viewer)
    const rows = await t.sql(
      `select i.id::int as id, ${permission.sql} as permission, ${owner.sql} as is_owner from items i where ${visible.sql} order by i.id`,
      [...permission.params, ...owner.params, ...visible.params],
    )
    return Object.fromEntries(
      rows.map((row) => [Number(row.id), { permission: permissionOf(row.permission), isOwner: row.is_owner === true }]),
    )
  }

  /** Every row with its permission and whether visibleSql lets it through. */
  async function everyRow(viewer: Viewer) {
    const permission = permissionSql('i', 'items', viewer)
    const visible = visibleSql('i', 'items', viewer)
    const rows = await t.sql(
      `select i.id::int as id, ${permission.sql} as permission, ${visible.sql} as visible from items i order by i.id`,
      [...permission.params, ...visible.params],
    )
    return rows.map((row) => ({ id: Number(row.id), permission: permissionOf(row.permission), visible: row.visible === true }))
  }

  describe.each(Object.entries(VIEWERS))('viewer %s', (name, viewer) => {
    const expected = EXPECTED[name as keyof typeof VIEWERS]

    it('sees exactly the expected rows, each with the expected permission', async () => {
      const rows = await seen(viewer)
      const permissions = Object.fromEntries(Object.entries(rows).map(([id, row]) => [id, row.permission]))
      expect(permissions).toEqual(Object.fromEntries(Object.entries(expected).map(([id, permission]) => [id, permission])))
    })

    it('is_owner is true exactly on the rows the viewer owns', async () => {
      const rows = await seen(viewer)
      const owned = ITEMS.filter(([id, userId]) => userId === viewer.userId && id in rows).map(([id]) => id)
      const flagged = Object.entries(rows)
        .filter(([, row]) => row.isOwner)
        .map(([id]) => Number(id))
      expect(flagged).toEqual(owned)
      for (const id of owned) expect(rows[id].permission).toBe('admin')
    })

    it('permissionSql is null exactly where visibleSql hides the row', async () => {
      for (const row of await everyRow(viewer)) {
        expect(row.permission === null, `row ${row.id}`).toBe(!row.visible)
      }
    })
  })

  describe('the rules one by one', () => {
    const permissionFor = async (viewer: Viewer, id: number) => (await everyRow(viewer)).find((row) => row.id === id)?.permission ?? null

    it('the owner has admin on their own rows of every visibility', async () => {
      for (const id of [1, 2, 3]) expect(await permissionFor(VIEWERS.memberOfW, id)).toBe('admin')
    })

    it("the workspace's owner and admins have admin on every row of their workspace, private ones included", async () => {
      for (const viewer of [VIEWERS.ownerOfW, VIEWERS.adminOfW]) {
        for (const id of [1, 4, 8, 15]) expect(await permissionFor(viewer, id)).toBe('admin')
      }
    })

    it("a plain member reads workspace rows of their workspace but sees nothing of others' private rows", async () => {
      expect(await permissionFor(VIEWERS.memberOfW, 15)).toBe('read')
      expect(await permissionFor(VIEWERS.memberOfW, 4)).toBeNull()
      expect(await permissionFor(VIEWERS.memberOfW, 8)).toBeNull()
    })

    it('workspace visibility is for the request workspace only', async () => {
      expect(await permissionFor(VIEWERS.memberOfW, 6)).toBeNull()
      expect(await permissionFor(VIEWERS.ownerOfW, 6)).toBeNull()
      expect(await permissionFor({ ...VIEWERS.memberOfW, workspaceId: X }, 6)).toBe('read')
      expect(await permissionFor({ ...VIEWERS.memberOfW, workspaceId: X }, 15)).toBeNull()
    })

    it('a public row is read for everyone', async () => {
      for (const viewer of Object.values(VIEWERS)) {
        if (viewer.userId !== 4) expect(await permissionFor(viewer, 7)).toBe('read')
      }
    })

    it('a user share grants its level, above what visibility gives', async () => {
      expect(await permissionFor(VIEWERS.memberOfW, 9)).toBe('write')
      expect(await permissionFor(VIEWERS.memberOfW, 16)).toBe('write')
      expect(await permissionFor(VIEWERS.outsider, 12)).toBe('admin')
    })

    it('a workspace share grants its level to every member of that workspace, owner and admin included', async () => {
      for (const viewer of [VIEWERS.ownerOfW, VIEWERS.adminOfW, VIEWERS.memberOfW]) {
        expect(await permissionFor(viewer, 10)).toBe('read')
        expect(await permissionFor(viewer, 17)).toBe('write')
      }
      expect(await permissionFor(VIEWERS.outsider, 13)).toBe('write')
    })

    it('several shares give the highest of them', async () => {
      expect(await permissionFor(VIEWERS.memberOfW, 11)).toBe('admin')
      await t.sql(`update shares set permission = 'write' where resource_type = 'items' and resource_id = 11 and entity_type = 'workspace'`)
      try {
        expect(await permissionFor(VIEWERS.memberOfW, 11)).toBe('write')
        expect(await permissionFor(VIEWERS.ownerOfW, 11)).toBe('write')
      } finally {
        await t.sql(
          `update shares set permission = 'admin' where resource_type = 'items' and resource_id = 11 and entity_type = 'workspace'`,
        )
      }
    })

    it('shares of another resource type, another user or another workspace grant nothing', async () => {
      expect(await permissionFor(VIEWERS.memberOfW, 12)).toBeNull()
      expect(await permissionFor(VIEWERS.ownerOfW, 5)).toBeNull()
      expect(await permissionFor(VIEWERS.memberOfW, 13)).toBeNull()
    })

    it('a user share does not match a workspace of the same id, nor the other way round', async () => {
      for (const viewer of Object.values(VIEWERS)) {
        if (viewer.userId !== 4) expect(await permissionFor(viewer, 14)).toBeNull()
      }
      expect(await permissionFor({ userId: W, workspaceId: 3, role: 'member' }, 14)).toBe('admin')
    })

    it('answers nothing for a viewer with no rows, shares or memberships', async () => {
      expect(await seen({ userId: 999, workspaceId: 999, role: 'owner' })).toEqual({
        3: { permission: 'read', isOwner: false },
        7: { permission: 'read', isOwner: false },
        16: { permission: 'read', isOwner: false },
      })
    })
  })

  describe('permissionOf and allows', () => {
    it('reads the values permissionSql produces', () => {
      expect(permissionOf('admin')).toBe('admin')
      expect(permissionOf('3')).toBe('admin')
      expect(permissionOf('2')).toBe('write')
      expect(permissionOf('1')).toBe('read')
      expect(permissionOf(2)).toBe('write')
      expect(permissionOf(null)).toBeNull()
      expect(permissionOf(undefined)).toBeNull()
      expect(permissionOf('0')).toBeNull()
      expect(permissionOf('read')).toBeNull()
    })

    it('allows a permission at or above the one needed, never null', () => {
      const levels: SharePermission[] = ['read', 'write', 'admin']
      for (const held of levels) {
        for (const needed of levels)
          expect(allows(held, needed), `${held} >= ${needed}`).toBe(PERMISSION_RANK[held] >= PERMISSION_RANK[needed])
        expect(allows(null, held)).toBe(false)
      }
      expect(allows('write', 'read')).toBe(true)
      expect(allows('read', 'write')).toBe(false)
      expect(allows('write', 'admin')).toBe(false)
    })

    it('lets a plain member update and delete exactly the rows their permission allows', async () => {
      const rows = await seen(VIEWERS.memberOfW)
      const updatable = Object.entries(rows)
        .filter(([, row]) => allows(row.permission, 'write'))
        .map(([id]) => Number(id))
      const deletable = Object.entries(rows)
        .filter(([, row]) => allows(row.permission, 'admin'))
        .map(([id]) => Number(id))
      expect(updatable).toEqual([1, 2, 3, 9, 11, 16, 17])
      expect(deletable).toEqual([1, 2, 3, 11])
    })
  })
})
