import { describe, expect, it } from 'vitest'
import { iso, page, withParam } from '../src/access/wire.ts'
import { slugify } from '../src/platform/slugs.ts'
import { mergeMetadata } from '../src/access/metadata.ts'
import { toDate } from '../src/platform/sql.ts'

describe('paginator (docs/api/conventions.md)', () => {
  it('builds Laravel links and meta for a middle page', () => {
    const result = page(['x', 'y'], { total: 7, page: 2, perPage: 2, path: 'http://h/api/v1/things', query: { sort: 'name' } })
    expect(result).toEqual({
      data: ['x', 'y'],
      links: {
        first: 'http://h/api/v1/things?sort=name&page=1&per_page=2',
        last: 'http://h/api/v1/things?sort=name&page=4&per_page=2',
        prev: 'http://h/api/v1/things?sort=name&page=1&per_page=2',
        next: 'http://h/api/v1/things?sort=name&page=3&per_page=2',
      },
      meta: { current_page: 2, from: 3, last_page: 4, path: 'http://h/api/v1/things', per_page: 2, to: 4, total: 7 },
    })
  })

  it('answers an empty page with from/to null and last_page 1', () => {
    const result = page([], { total: 0, page: 1, perPage: 15, path: 'http://h/x' })
    expect(result.meta).toEqual({ current_page: 1, from: null, last_page: 1, path: 'http://h/x', per_page: 15, to: null, total: 0 })
    expect(result.links.prev).toBeNull()
    expect(result.links.next).toBeNull()
  })
})

describe('with', () => {
  it('splits, trims and checks relations', () => {
    expect(withParam(['user', 'tools'] as const).parse('user, tools')).toEqual(['user', 'tools'])
    const bad = withParam(['user'] as const).safeParse('user,secrets')
    expect(bad.success).toBe(false)
  })
})

describe('timestamps', () => {
  it('reads PostgreSQL text timestamps as UTC instants', () => {
    expect(toDate('2026-11-21 09:41:21.581078+00').toISOString()).toBe('2026-11-21T09:41:21.581Z')
    expect(toDate('2026-11-21 10:41:21+01').toISOString()).toBe('2026-11-21T09:41:21.000Z')
  })

  it('formats PostgreSQL JSON instants as the Date round trip does, whatever their fraction', () => {
    // iso() rewrites the UTC JSON form as text without a Date; every other form goes through toDate.
    for (const value of [
      '2026-11-21T09:41:21+00:00',
      '2026-11-21T09:41:21.5+00:00',
      '2026-11-21T09:41:21.58+00:00',
      '2026-11-21T09:41:21.581+00:00',
      '2026-11-21T09:41:21.5819+00:00',
      '2026-11-21T23:59:59.999999+00:00',
      '0099-01-01T00:00:00.000001+00:00',
      '2026-11-21T10:41:21.5+01:00',
      '2026-11-21 09:41:21.581078+00',
      '2026-11-21T09:41:21.581Z',
    ]) {
      expect(iso(value), value).toBe(toDate(value).toISOString())
    }
    expect(iso('2026-11-21T09:41:21.5819+00:00')).toBe('2026-11-21T09:41:21.581Z')
    expect(iso(new Date('2026-11-21T09:41:21.581Z'))).toBe('2026-11-21T09:41:21.581Z')
  })
})

describe('slugify', () => {
  it.each([
    ["Ada's Workspace", 'ada-s-workspace'],
    ['  Ünïcödé  Team ', 'unicode-team'],
    ['日本語', 'workspace'],
    ['a'.repeat(100), 'a'.repeat(60)],
  ])('%s -> %s', (name, slug) => expect(slugify(name)).toBe(slug))
})

describe('mergeMetadata (docs/api/resources.md: merged key by key, null removes)', () => {
  it('keeps, replaces, adds and removes keys', () => {
    expect(mergeMetadata({ a: '1', b: '2', c: ['x'] }, { b: '3', c: null, d: '4' })).toEqual({ a: '1', b: '3', d: '4' })
  })
})

describe('name', () => {
  it('refuses blank and over-long names, NUL and lone surrogates', async () => {
    const { name } = await import('../src/access/wire.ts')
    expect(name().safeParse('Ada').success).toBe(true)
    for (const bad of ['', '   ', 'a'.repeat(256), 'a\u0000b', '\ud800']) expect(name().safeParse(bad).success, JSON.stringify(bad)).toBe(false)
  })
})
