/**
 * The category catalogue (routers/categories.router.ts, src/catalog/categories.service.ts): `GET /api/v1/categories` in the paginator shape, and the helpers agents and
 * workflows share (`resolveCategoryUuids`, `categoriesOf`).
 */
import { randomUUID } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ValidationError } from '../src/platform/errors.ts'
import { categoriesOf } from '../src/access/categories.ts'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { expectErrorBody, expectInvalid, UUID } from './helpers/expect.ts'
import type { ResourceCtx } from '../src/context.ts'
import { readOnlyToken } from './helpers/agents.ts'
import { resolveCategoryUuids } from '../src/access/references.ts'

describe('categories', () => {
  let t: TestApp
  let alice: TestUser
  const list = (query = '', token = alice.token) => t.http('GET', `/api/v1/categories${query ? `?${query}` : ''}`, { token })

  beforeAll(async () => {
    t = await createTestApp()
    alice = await t.make.user()
  })
  afterAll(async () => t?.close())

  describe('categories.list (GET /api/v1/categories)', () => {
    it('answers the 14 seeded categories in catalogue order as the paginator shape, exact keys', async () => {
      const res = await list('per_page=100')
      expect(res.status).toBe(200)
      expect(Object.keys(res.body).sort()).toEqual(['data', 'links', 'meta'])
      expect(res.body.meta).toMatchObject({ total: 14, per_page: 100, current_page: 1, last_page: 1, from: 1, to: 14 })
      for (const category of res.body.data) {
        expect(Object.keys(category).sort()).toEqual(['description', 'name', 'slug', 'uuid'])
        expect(category.uuid).toMatch(UUID)
      }
      const rows = await t.sql('select slug from categories order by position, id')
      expect(res.body.data.map((c: { slug: string }) => c.slug)).toEqual(rows.map((row) => row.slug))
    })

    it('pages (15 by default) and sorts by name both ways', async () => {
      const first = await list()
      expect(first.body.data).toHaveLength(14)
      expect(first.body.meta.per_page).toBe(15)
      const two = await list('per_page=5&page=3')
      expect(two.body.data).toHaveLength(4)
      expect(two.body.links.prev).toContain('page=2')
      const byName = (await list('sort=name&per_page=100')).body.data.map((c: { name: string }) => c.name)
      expect(byName).toEqual([...byName].sort((a: string, b: string) => a.toLowerCase().localeCompare(b.toLowerCase())))
      const reversed = (await list('sort=-name&per_page=100')).body.data.map((c: { name: string }) => c.name)
      expect(reversed).toEqual([...byName].reverse())
    })

    it('searches name, slug and description case-insensitively, % taken literally', async () => {
      const res = await list('search=MARKET')
      expect(res.body.data.map((c: { slug: string }) => c.slug)).toEqual(['marketing'])
      expect((await list('search=social%20media')).body.data.map((c: { slug: string }) => c.slug)).toEqual(['marketing'])
      expect((await list('search=%25')).body.data).toEqual([])
    })

    it.each([
      ['per_page over 100', 'per_page=101', 'per_page'],
      ['page 0', 'page=0', 'page'],
      ['an unknown sort', 'sort=slug', 'sort'],
      ['a search over 255 characters', `search=${'s'.repeat(256)}`, 'search'],
    ])('answers 400 naming the parameter for %s', async (_label, query, path) => {
      expectInvalid(await list(query), path)
    })

    it('answers 400 for an unknown parameter, 401 without a token, and works with a read-only token', async () => {
      const unknown = await list('colour=red')
      expect(unknown.status).toBe(400)
      expect(unknown.body.issues).toEqual([expect.objectContaining({ code: 'unrecognized_keys', keys: ['colour'] })])
      expectErrorBody(await t.http('GET', '/api/v1/categories'), 401, 'UNAUTHORIZED')
      expect((await list('', (await readOnlyToken(t, alice)).token)).status).toBe(200)
    })

    it('answers the same through the tRPC caller', async () => {
      const res = await t.as(alice).categories.list({ per_page: 3 })
      expect(res.data).toHaveLength(3)
      expect(res.meta.total).toBe(14)
    })
  })

  describe('resolveCategoryUuids / categoriesOf (shared with agents)', () => {
    /** A context shaped like a workspace procedure's; the helpers only use `em`. */
    const ctxOf = (): ResourceCtx => {
      const em = t.runtime.orm.em.fork()
      return { em } as unknown as ResourceCtx
    }

    it('answers ids in the order given, without duplicates; an empty list is no query', async () => {
      const rows = await t.sql('select id::float8 as id, uuid from categories order by position limit 3')
      const [a, b, c] = rows.map((row) => ({ id: Number(row.id), uuid: String(row.uuid) }))
      expect(await resolveCategoryUuids(ctxOf(), [c.uuid, a.uuid, c.uuid.toUpperCase(), b.uuid], ['category_uuids'])).toEqual([c.id, a.id, b.id])
      expect(await resolveCategoryUuids(ctxOf(), [], ['category_uuids'])).toEqual([])
    })

    it('throws a ValidationError naming [...field, index] of the first unknown uuid', async () => {
      const [row] = await t.sql('select uuid from categories limit 1')
      const error = await resolveCategoryUuids(ctxOf(), [String(row.uuid), randomUUID(), 'junk'], ['metadata', 'category_uuids']).catch((e: unknown) => e)
      expect(error).toBeInstanceOf(ValidationError)
      expect((error as ValidationError).issues).toEqual([{ code: 'custom', path: ['metadata', 'category_uuids', 1], message: 'No category has this uuid' }])
    })

    it('categoriesOf maps every id (empty arrays for none) in one query', async () => {
      const wf = await t.as(alice).workflows.create({ name: 'With cats', category_uuids: [] })
      const [{ id }] = await t.sql('select id::float8 as id from workflows where uuid = ?', [wf.data.uuid])
      const cats = await t.sql('select id::float8 as id, uuid from categories order by position desc limit 2')
      for (const cat of cats) await t.sql('insert into workflow_categories (workflow_id, category_id) values (?, ?)', [id, cat.id])
      const map = await categoriesOf(t.runtime.orm.em.fork(), 'workflows', [Number(id), 999_999])
      expect(map.get(999_999)).toEqual([])
      expect(map.get(Number(id))?.map((c) => c.uuid)).toEqual([...cats].reverse().map((c) => c.uuid))
      expect((await categoriesOf(t.runtime.orm.em.fork(), 'agents', [])).size).toBe(0)
    })
  })
})
