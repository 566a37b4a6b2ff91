/**
 * Dataset items (routers/datasets.router.ts, src/evaluations/dataset-items.service.ts and
 * dataset-jsonl.ts; docs/api/evaluations.md, "Datasets"): adding 1..1,000 items from the body or
 * from JSONL uploads, listing them oldest first, updating and deleting them over real HTTP; each
 * validation rule (a 400 naming the field, nothing stored), `items_count` kept with the items, and
 * the dataset's access rules (401, 403, another tenant's 404 that shows nothing).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { readOnlyToken } from './helpers/agents.ts'
import { expectInvalid, ISO, UUID } from './helpers/expect.ts'
import { PNG, uploadKey } from './helpers/media.ts'
import {
  addItems,
  counts,
  expectDatasetHidden,
  expectItemHidden,
  ITEM_KEYS,
  jsonl,
  makeDataset,
  numbered,
  shareDataset,
  storedState,
  uploadText,
} from './helpers/datasets.ts'

describe('dataset items', () => {
  let t: TestApp
  let alice: TestUser
  let bob: TestUser
  let carol: TestUser
  let team: { uuid: string }
  const inTeam: Record<string, string> = {}
  const http = (...args: Parameters<TestApp['http']>) => t.http(...args)
  const post = (datasetUuid: string, user: { token: string }, body: unknown, headers: Record<string, string> = {}) =>
    http('POST', `/api/v1/datasets/${datasetUuid}/items`, { token: user.token, headers, body })
  const list = (datasetUuid: string, user: { token: string }, query = '', headers: Record<string, string> = {}) =>
    http('GET', `/api/v1/datasets/${datasetUuid}/items${query}`, { token: user.token, headers })
  const put = (itemUuid: string, user: { token: string }, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    http('PUT', `/api/v1/dataset-items/${itemUuid}`, { token: user.token, headers, body })
  const del = (itemUuid: string, user: { token: string }, headers: Record<string, string> = {}) =>
    http('DELETE', `/api/v1/dataset-items/${itemUuid}`, { token: user.token, headers })
  /** Asserts a refused add: a 400 naming `path`, `message` in its issue if given, and nothing stored. */
  const expectRefused = async (datasetUuid: string, body: unknown, path: string, message?: RegExp) => {
    const before = await storedState(t)
    const res = await post(datasetUuid, alice, body)
    expectInvalid(res, path)
    if (message) expect(res.body.issues.find((issue: { path: unknown[] }) => issue.path.join('.') === path).message).toMatch(message)
    expect(await storedState(t)).toEqual(before)
    return res
  }

  beforeAll(async () => {
    t = await createTestApp()
    alice = await t.make.user({ name: 'Alice Liddell' })
    bob = await t.make.user({ name: 'Bob Builder' })
    carol = await t.make.user({ name: 'Carol Member' })
    team = await t.make.workspace(alice, { name: 'Items Team' })
    await t.make.member(team, alice, carol, 'member')
    inTeam['x-workspace-uuid'] = team.uuid
  })
  afterAll(async () => t?.close())

  describe('adding and listing', () => {
    it('answers 201 {data: [Item]} in the order sent, counts them, lists them oldest first and records dataset.add_items', async () => {
      const dataset = await makeDataset(t, alice)
      const res = await post(dataset.uuid, alice, {
        items: [
          { input: 'What is 2 + 2?', expected_output: '4', metadata: { topic: 'math', tags: ['easy'], weight: 1.5 } },
          { input: 'Name a colour.' },
          { input: 'Say nothing.', expected_output: null, metadata: null },
        ],
      })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      expect(Object.keys(res.body)).toEqual(['data'])
      const items = res.body.data
      expect(items.map((item: { input: string }) => item.input)).toEqual(['What is 2 + 2?', 'Name a colour.', 'Say nothing.'])
      for (const item of items) {
        expect(Object.keys(item).sort()).toEqual(ITEM_KEYS)
        expect(item.uuid).toMatch(UUID)
        expect(item.created_at).toMatch(ISO)
        expect(item.updated_at).toMatch(ISO)
      }
      expect(items[0]).toMatchObject({ expected_output: '4', metadata: { topic: 'math', tags: ['easy'], weight: 1.5 } })
      expect(items[1]).toMatchObject({ expected_output: null, metadata: null })
      expect(items[2]).toMatchObject({ expected_output: null, metadata: null })

      await addItems(t, alice, dataset.uuid, numbered(2, 'later'))
      expect((await http('GET', `/api/v1/datasets/${dataset.uuid}`, { token: alice.token })).body.data.items_count).toBe(5)
      expect(await counts(t, dataset.uuid)).toEqual({ column: 5, rows: 5 })
      const page = await list(dataset.uuid, alice)
      expect(page.status).toBe(200)
      expect(page.body.data.slice(0, 3)).toEqual(items)
      expect(page.body.data.map((item: { input: string }) => item.input).slice(3)).toEqual(['later 1', 'later 2'])
      const path = `${t.config.appUrl}/api/v1/datasets/${dataset.uuid}/items`
      expect(page.body.meta).toEqual({ current_page: 1, from: 1, last_page: 1, path, per_page: 15, to: 5, total: 5 })
      const second = await list(dataset.uuid, alice, '?per_page=2&page=2')
      expect(second.body.data.map((item: { input: string }) => item.input)).toEqual(['Say nothing.', 'later 1'])
      expect(second.body.meta).toMatchObject({ current_page: 2, from: 3, to: 4, last_page: 3, total: 5 })
      expect(second.body.links.next).toBe(`${path}?page=3&per_page=2`)

      const [event] = await t.sql(`select changes from audit_events where action = 'dataset.add_items' and resource_uuid = ? order by id limit 1`, [dataset.uuid])
      expect(event.changes).toEqual({ items_count: { from: 0, to: 3 } })
    })

    it('adds up to 1,000 items at once and refuses 1,001 with nothing stored', async () => {
      const dataset = await makeDataset(t, alice)
      expect(await addItems(t, alice, dataset.uuid, numbered(1000))).toHaveLength(1000)
      await expectRefused(dataset.uuid, { items: numbered(1001) }, 'items')
      expect(await counts(t, dataset.uuid)).toEqual({ column: 1000, rows: 1000 })
      const last = await list(dataset.uuid, alice, '?per_page=100&page=10')
      expect(last.body.data.at(-1).input).toBe('case 1000')
    })

    it.each([
      ['neither items nor file', {}, 'items'],
      ['no items', { items: [] }, 'items'],
      ['items that is not a list', { items: { input: 'x' } }, 'items'],
      ['an item without input', { items: [{ expected_output: 'x' }] }, 'items.0.input'],
      ['an empty input', { items: [{ input: 'ok' }, { input: '' }] }, 'items.1.input'],
      ['a blank input', { items: [{ input: ' \n\t ' }] }, 'items.0.input'],
      ['an input over 100,000 characters', { items: [{ input: 'i'.repeat(100_001) }] }, 'items.0.input'],
      ['an input with a NUL character', { items: [{ input: 'a\u0000b' }] }, 'items.0.input'],
      ['an input that is a number', { items: [{ input: 42 }] }, 'items.0.input'],
      ['an expected_output over 100,000 characters', { items: [{ input: 'x', expected_output: 'o'.repeat(100_001) }] }, 'items.0.expected_output'],
      ['an expected_output that is an object', { items: [{ input: 'x', expected_output: { a: 1 } }] }, 'items.0.expected_output'],
      ['metadata that is a list', { items: [{ input: 'x', metadata: [1, 2] }] }, 'items.0.metadata'],
      ['metadata that is a string', { items: [{ input: 'x', metadata: 'tag' }] }, 'items.0.metadata'],
      ['metadata over 64 KiB', { items: [{ input: 'x', metadata: { note: 'm'.repeat(70_000) } }] }, 'items.0.metadata'],
      ['metadata holding a NUL character', { items: [{ input: 'x', metadata: { deep: { note: 'a\u0000b' } } }] }, 'items.0.metadata.deep.note'],
      ['an item with an unknown member', { items: [{ input: 'x', output: 'y' }] }, 'items.0'],
      ['an unknown member of the body', { items: [{ input: 'x' }], dataset: 'x' }, ''],
      ['file that is not an object', { file: 'cases.jsonl' }, 'file'],
      ['file without keys', { file: {} }, 'file.keys'],
      ['file with no keys', { file: { keys: [] } }, 'file.keys'],
      ['file with the same key twice', { file: { keys: ['a.jsonl', 'a.jsonl'] } }, 'file.keys.1'],
      ['a key that names no upload', { file: { keys: ['0190a5e0-0000-7000-8000-000000000000.jsonl'] } }, 'file.keys.0'],
    ])('answers 400 naming the field for %s, storing nothing', async (_label, body, path) => {
      const dataset = await makeDataset(t, alice)
      await expectRefused(dataset.uuid, body, path)
    })

    it('answers 400 naming dataset_uuid for a malformed uuid; 404 for an unknown dataset', async () => {
      expectInvalid(await post('0123-abcd', alice, { items: numbered(1) }), 'dataset_uuid')
      expect((await post('0190a5e0-0000-7000-8000-000000000000', alice, { items: numbered(1) })).status).toBe(404)
      expectInvalid(await list('0123-abcd', alice), 'dataset_uuid')
      const dataset = await makeDataset(t, alice)
      for (const query of ['?per_page=0', '?per_page=101', '?page=0', '?sort=input']) expect((await list(dataset.uuid, alice, query)).status).toBe(400)
    })

    it('adds through the tRPC caller', async () => {
      const dataset = await makeDataset(t, alice)
      const added = await t.as(alice).datasets.items.create({ dataset_uuid: dataset.uuid, items: [{ input: 'via caller', metadata: { n: 1 } }] })
      expect(added.data).toEqual([expect.objectContaining({ input: 'via caller', metadata: { n: 1 }, expected_output: null })])
    })
  })

  describe('adding from JSONL uploads (file.keys)', () => {
    it('adds every non-empty line of a .jsonl upload, in order; blank lines and CRLF are fine', async () => {
      const dataset = await makeDataset(t, alice)
      const text = [
        JSON.stringify({ input: 'First?', expected_output: 'One', metadata: { source: 'jsonl' } }),
        '',
        '   ',
        `${JSON.stringify({ input: 'Second?' })}\r`,
        JSON.stringify({ input: 'Third?', expected_output: null, metadata: null }),
        '',
      ].join('\n')
      const key = await uploadText(t, alice, text)
      const res = await post(dataset.uuid, alice, { file: { keys: [key] } })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      expect(res.body.data.map((item: { input: string }) => item.input)).toEqual(['First?', 'Second?', 'Third?'])
      expect(res.body.data[0]).toMatchObject({ expected_output: 'One', metadata: { source: 'jsonl' } })
      expect(await counts(t, dataset.uuid)).toEqual({ column: 3, rows: 3 })
      // Uploads answer the type detected: `.jsonl` is its own, downloaded as UTF-8 text.
      const download = await fetch(`${t.url}/api/v1/media/${key}`)
      expect(download.headers.get('content-type')).toBe('application/jsonl; charset=utf-8')
    })

    it('reads several files in order, .json and .txt uploads too', async () => {
      const dataset = await makeDataset(t, alice)
      const keys = [
        await uploadText(t, alice, jsonl([{ input: 'a' }, { input: 'b' }])),
        await uploadText(t, alice, jsonl([{ input: 'c' }]), 'more.txt'),
        await uploadText(t, alice, jsonl([{ input: 'd' }]), 'one.json'),
      ]
      const res = await post(dataset.uuid, alice, { file: { keys } })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      expect(res.body.data.map((item: { input: string }) => item.input)).toEqual(['a', 'b', 'c', 'd'])
    })

    it('refuses a bad line naming file.keys.N with its line number, storing nothing from any file', async () => {
      const dataset = await makeDataset(t, alice)
      const good = await uploadText(t, alice, jsonl([{ input: 'fine' }]))
      const cases: [string, RegExp][] = [
        [`${jsonl([{ input: 'ok' }, { input: 'ok too' }])}\n{"input": "cut`, /^Line 3: not valid JSON$/],
        [jsonl([{ input: 'ok' }, { input: '   ' }]), /^Line 2: input: must not be blank$/],
        [jsonl([{ input: 'ok' }, { expected_output: 'x' }]), /^Line 2: input: /],
        [jsonl([{ input: 'ok', extra: 1 }]), /^Line 1: unknown member "extra"$/],
        [jsonl([{ input: 'ok', metadata: ['a'] }]), /^Line 1: metadata: /],
        [jsonl([{ input: 'x'.repeat(100_001) }]), /^Line 1: input: /],
        [jsonl([['input', 'x']]), /^Line 1: /],
        ['\n\n  \n', /holds no items/],
      ]
      for (const [text, message] of cases) {
        const bad = await uploadText(t, alice, text)
        await expectRefused(dataset.uuid, { file: { keys: [good, bad] } }, 'file.keys.1', message)
      }
      expect(await counts(t, dataset.uuid)).toEqual({ column: 0, rows: 0 })
    })

    it('refuses more than 1,000 items over all the files, naming file.keys, storing nothing', async () => {
      const dataset = await makeDataset(t, alice)
      const keys = [await uploadText(t, alice, jsonl(numbered(600))), await uploadText(t, alice, jsonl(numbered(401)))]
      await expectRefused(dataset.uuid, { file: { keys } }, 'file.keys', /more than 1000 items/)
      const exactly = [await uploadText(t, alice, jsonl(numbered(600))), await uploadText(t, alice, jsonl(numbered(400)))]
      expect((await post(dataset.uuid, alice, { file: { keys: exactly } })).body.data).toHaveLength(1000)
    })

    it('refuses items and file together (naming file), an upload that is no JSONL, and another tenant upload', async () => {
      const dataset = await makeDataset(t, alice)
      const key = await uploadText(t, alice, jsonl([{ input: 'x' }]))
      await expectRefused(dataset.uuid, { items: numbered(1), file: { keys: [key] } }, 'file', /either items or file/)
      const png = await uploadKey(t, alice.token, { bytes: PNG, filename: 'photo.png' })
      await expectRefused(dataset.uuid, { file: { keys: [png] } }, 'file.keys.0', /not JSON Lines/)
      const bobs = await uploadText(t, bob, jsonl([{ input: 'bob' }]))
      await expectRefused(dataset.uuid, { file: { keys: [bobs] } }, 'file.keys.0', /No uploaded file has this key/)
    })
  })

  describe('updating and deleting items', () => {
    it('PUT changes only what is sent; null clears expected_output and metadata; metadata is replaced whole', async () => {
      const dataset = await makeDataset(t, alice)
      const [item] = await addItems(t, alice, dataset.uuid, [{ input: 'Q', expected_output: 'A', metadata: { a: 1, b: 2 } }])
      const changed = await put(item.uuid, alice, { input: 'Q2', metadata: { c: 3 } })
      expect(changed.status, JSON.stringify(changed.body)).toBe(200)
      expect(changed.body.data).toMatchObject({ uuid: item.uuid, input: 'Q2', expected_output: 'A', metadata: { c: 3 }, created_at: item.created_at })
      const cleared = await put(item.uuid, alice, { expected_output: null, metadata: null })
      expect(cleared.body.data).toMatchObject({ input: 'Q2', expected_output: null, metadata: null })
      expect((await list(dataset.uuid, alice)).body.data).toEqual([cleared.body.data])
      const [event] = await t.sql(`select changes from audit_events where action = 'dataset_item.update' and resource_uuid = ? order by id limit 1`, [item.uuid])
      expect(event.changes).toEqual({ input: { from: 'Q', to: 'Q2' }, metadata: { from: { a: 1, b: 2 }, to: { c: 3 } } })
    })

    it.each([
      [{ input: '' }, 'input'],
      [{ input: '  ' }, 'input'],
      [{ input: null }, 'input'],
      [{ expected_output: 'o'.repeat(100_001) }, 'expected_output'],
      [{ metadata: [1] }, 'metadata'],
      [{ metadata: { note: 'm'.repeat(70_000) } }, 'metadata'],
      [{ dataset_uuid: '0190a5e0-0000-7000-8000-000000000000' }, ''],
    ])('PUT answers 400 naming the field for %j, changing nothing', async (body, path) => {
      const dataset = await makeDataset(t, alice)
      const [item] = await addItems(t, alice, dataset.uuid, numbered(1))
      const before = await storedState(t)
      expectInvalid(await put(item.uuid, alice, body), path)
      expectInvalid(await put('0123-abcd', alice, { input: 'x' }), 'item_uuid')
      expect(await storedState(t)).toEqual(before)
    })

    it('DELETE answers 204, counts the item out and lists it no more; a second delete is a 404', async () => {
      const dataset = await makeDataset(t, alice)
      const items = await addItems(t, alice, dataset.uuid, numbered(3))
      const res = await del(items[1].uuid, alice)
      expect(res.status).toBe(204)
      expect(res.body).toBeNull()
      expect(await counts(t, dataset.uuid)).toEqual({ column: 2, rows: 2 })
      expect((await list(dataset.uuid, alice)).body.data.map((item: { uuid: string }) => item.uuid)).toEqual([items[0].uuid, items[2].uuid])
      expect((await del(items[1].uuid, alice)).status).toBe(404)
      expect((await t.sql(`select 1 from audit_events where action = 'dataset_item.delete' and resource_uuid = ?`, [items[1].uuid])).length).toBe(1)
      expectInvalid(await del('0123-abcd', alice), 'item_uuid')
    })
  })

  describe('access', () => {
    it("another tenant's dataset and items are 404s that show none of their data, and stay unchanged", async () => {
      const dataset = await makeDataset(t, alice, { name: 'Alice Private Cases' })
      const [item] = await addItems(t, alice, dataset.uuid, [{ input: 'Secret question 7731', expected_output: 'Secret answer 7731' }])
      const before = await storedState(t)
      expectDatasetHidden(await list(dataset.uuid, bob), dataset)
      expectDatasetHidden(await post(dataset.uuid, bob, { items: numbered(1) }), dataset)
      const hidden = { uuid: item.uuid, name: 'Secret question 7731' }
      for (const res of [await put(item.uuid, bob, { input: 'mine' }), await del(item.uuid, bob)]) {
        expectItemHidden(res, hidden)
        expect(JSON.stringify(res.body)).not.toContain('Secret answer')
        expect(JSON.stringify(res.body)).not.toContain(dataset.uuid)
      }
      expectItemHidden(await put('0190a5e0-0000-7000-8000-000000000000', bob, { input: 'x' }), hidden)
      expect(await storedState(t)).toEqual(before)
    })

    it('a workspace member who only reads may list items but not add, change or delete them (403)', async () => {
      const dataset = await makeDataset(t, alice, { visibility: 'workspace' }, team.uuid)
      const [item] = await addItems(t, alice, dataset.uuid, numbered(1), inTeam)
      const before = await storedState(t)
      expect((await list(dataset.uuid, carol, '', inTeam)).body.data).toEqual([item])
      for (const res of [
        await post(dataset.uuid, carol, { items: numbered(1) }, inTeam),
        await put(item.uuid, carol, { input: 'carol' }, inTeam),
        await del(item.uuid, carol, inTeam),
      ]) {
        expect(res.status, JSON.stringify(res.body)).toBe(403)
        expect(res.body.code).toBe('FORBIDDEN')
      }
      expect(await storedState(t)).toEqual(before)
      // A write share lets her.
      await shareDataset(t, dataset.uuid, { user: carol.id }, 'write')
      expect((await put(item.uuid, carol, { input: 'carol' }, inTeam)).body.data.input).toBe('carol')
      expect((await post(dataset.uuid, carol, { items: numbered(1) }, inTeam)).status).toBe(201)
    })

    it('a read-only token may list but not add, change or delete (403); no token is a 401', async () => {
      const dataset = await makeDataset(t, alice)
      const [item] = await addItems(t, alice, dataset.uuid, numbered(1))
      const token = await readOnlyToken(t, alice)
      const before = await storedState(t)
      expect((await list(dataset.uuid, token)).status).toBe(200)
      expect((await post(dataset.uuid, token, { items: numbered(1) })).status).toBe(403)
      expect((await put(item.uuid, token, { input: 'x' })).status).toBe(403)
      expect((await del(item.uuid, token)).status).toBe(403)
      expect((await http('GET', `/api/v1/datasets/${dataset.uuid}/items`)).status).toBe(401)
      expect((await http('POST', `/api/v1/datasets/${dataset.uuid}/items`, { body: { items: numbered(1) } })).status).toBe(401)
      expect((await http('PUT', `/api/v1/dataset-items/${item.uuid}`, { body: { input: 'x' } })).status).toBe(401)
      expect((await http('DELETE', `/api/v1/dataset-items/${item.uuid}`)).status).toBe(401)
      expect(await storedState(t)).toEqual(before)
    })
  })
})
