/**
 * Uploads over real HTTP with real multipart bodies (src/http/media.routes.ts,
 * src/catalog/media.service.ts, src/platform/storage.ts; docs/api/conventions.md and docs/api/resources.md):
 * `POST /api/v1/media` types files from their bytes, holds them to the allow-list and
 * UPLOAD_MAX_BYTES, stores them under random keys in DATA_DIR/media and records them for the
 * request's workspace; `GET /api/v1/media/{key}` serves them publicly with safe headers.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { mkdtemp } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { Readable } from 'node:stream'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { LocalStorage } from '../src/platform/storage.ts'
import { VALIDATION_MESSAGE } from '../src/trpc/errors.ts'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { readOnlyToken } from './helpers/agents.ts'
import { ACME_KEY, expectErrorBody, expectIssues, UUID } from './helpers/expect.ts'
import { makeDocx } from './helpers/documents.ts'
import { GIF, JPEG, PDF, PNG, upload, WEBP, ZIP } from './helpers/media.ts'
import { workspaceId } from './helpers/rows.ts'

const LIMIT = 4096
const KEY = /^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.[a-z]+$/
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'

describe('media', () => {
  let t: TestApp
  let alice: TestUser
  let bob: TestUser
  const mediaDir = () => path.join(t.config.dataDir, 'media')
  const storedFiles = () => (existsSync(mediaDir()) ? readdirSync(mediaDir()) : [])
  const mediaRows = async () => Number((await t.sql('select count(*)::int as n from media'))[0].n)
  /** GET on the running server for a URL the service answered. */
  const fetchUrl = (url: string) => fetch(url.replace(t.config.appUrl, t.url))

  beforeAll(async () => {
    t = await createTestApp({ UPLOAD_MAX_BYTES: String(LIMIT) })
    alice = await t.make.user()
    bob = await t.make.user()
  })
  afterAll(async () => t?.close())

  describe('POST /api/v1/media', () => {
    it.each([
      ['a PNG', PNG, 'photo.png', 'image/png', 'png'],
      ['a JPEG', JPEG, 'photo.jpeg', 'image/jpeg', 'jpg'],
      ['a GIF', GIF, 'anim.gif', 'image/gif', 'gif'],
      ['a WebP', WEBP, 'pic.webp', 'image/webp', 'webp'],
      ['a PDF', PDF, 'handbook.pdf', 'application/pdf', 'pdf'],
      ['a text file', Buffer.from('hello\nworld\n'), 'notes.txt', 'text/plain', 'txt'],
      ['a Markdown file', Buffer.from('# Title\n\nÜmlauts and 😀\n'), 'README.markdown', 'text/markdown', 'md'],
      ['a CSV file', Buffer.from('a,b\n1,2\n'), 'data.CSV', 'text/csv', 'csv'],
      ['a JSON file', Buffer.from('{"a": [1, 2]}'), 'data.json', 'application/json', 'json'],
      ['a JSON Lines file (dataset items)', Buffer.from('{"input": "a"}\n{"input": "b"}\n'), 'cases.jsonl', 'application/jsonl', 'jsonl'],
      ['an HTML page', Buffer.from('<!doctype html><h1>Returns</h1><script>alert(1)</script>'), 'faq.html', 'text/html', 'html'],
      ['an HTML page named .htm', Buffer.from('<p>Opening hours: 9 to 5</p>'), 'hours.HTM', 'text/html', 'html'],
    ])('answers 201 {data: {uuid, key, url, mime_type, size}} for %s, and stores the bytes', async (_label, bytes, filename, mime, ext) => {
      const res = await upload(t, { token: alice.token, files: [{ bytes, filename }] })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      expect(Object.keys(res.body)).toEqual(['data'])
      const { data } = res.body
      expect(Object.keys(data).sort()).toEqual(['key', 'mime_type', 'size', 'url', 'uuid'])
      expect(data.uuid).toMatch(UUID)
      expect(data.key).toMatch(KEY)
      expect(data.key.endsWith(`.${ext}`)).toBe(true)
      expect(data).toMatchObject({ mime_type: mime, size: bytes.length, url: `${t.config.appUrl}/api/v1/media/${data.key}` })
      expect(readFileSync(path.join(mediaDir(), data.key))).toEqual(bytes)
      const [row] = await t.sql(
        'select user_id, workspace_id::float8 as workspace_id, original_name, mime_type, disk, path, size::float8 as size from media where uuid = ?',
        [data.uuid],
      )
      expect(row).toEqual({
        user_id: alice.id,
        workspace_id: await workspaceId(t, alice.workspaceUuid),
        original_name: filename,
        mime_type: mime,
        disk: 'local',
        path: data.key,
        size: bytes.length,
      })
    })

    it("types a file from its bytes, not from the client's Content-Type or file name", async () => {
      const res = await upload(t, { token: alice.token, files: [{ bytes: PNG, filename: 'notes.txt', type: 'text/plain' }] })
      expect(res.body.data).toMatchObject({ mime_type: 'image/png' })
      expect(res.body.data.key.endsWith('.png')).toBe(true)
      const zip = await upload(t, { token: alice.token, files: [{ bytes: ZIP, filename: 'photo.png', type: 'image/png' }] })
      expectErrorBody(zip, 415, 'UNSUPPORTED_MEDIA_TYPE')
    })

    it('never puts the client file name in a path, and keeps it only as data', async () => {
      const res = await upload(t, { token: alice.token, files: [{ bytes: 'x', filename: '../../etc/passwd.txt' }] })
      expect(res.status).toBe(201)
      expect(res.body.data.key).toMatch(KEY)
      expect(storedFiles()).toContain(res.body.data.key)
      const [row] = await t.sql('select original_name from media where uuid = ?', [res.body.data.uuid])
      expect(row.original_name).not.toContain('/')
    })

    it('records the upload for the workspace of the request context (X-Workspace-UUID)', async () => {
      const team = await t.make.workspace(alice, { name: 'Uploads team' })
      const res = await upload(t, { token: alice.token, files: [{ bytes: PNG, filename: 'a.png' }], headers: { 'x-workspace-uuid': team.uuid } })
      const [row] = await t.sql('select workspace_id::float8 as id from media where uuid = ?', [res.body.data.uuid])
      expect(Number(row.id)).toBe(await workspaceId(t, team.uuid))
      const [files, rows] = [storedFiles().length, await mediaRows()]
      const outsider = await upload(t, { token: bob.token, files: [{ bytes: PNG, filename: 'a.png' }], headers: { 'x-workspace-uuid': team.uuid } })
      expectErrorBody(outsider, 404, 'NOT_FOUND')
      // Another tenant's workspace: nothing stored, nothing recorded.
      expect(storedFiles()).toHaveLength(files)
      expect(await mediaRows()).toBe(rows)
      expectIssues(await upload(t, { token: alice.token, files: [{ bytes: PNG, filename: 'a.png' }], headers: { 'x-workspace-uuid': 'nope' } }), [
        ['X-Workspace-UUID'],
      ])
    })

    it.each([
      ['a ZIP archive', ZIP, 'archive.zip'],
      ['an SVG image', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'), 'logo.svg'],
      ['text without an extension', Buffer.from('hello'), 'notes'],
      ['a .txt file that is not UTF-8', Buffer.from([0x68, 0x69, 0xff, 0xfe, 0x00]), 'latin.txt'],
      ['a .csv file holding NUL', Buffer.from('a,b\u0000\n'), 'nul.csv'],
      ['a .json file cut inside a UTF-8 sequence', Buffer.from([0x7b, 0x22, 0xc3]), 'cut.json'],
      ['an empty file', Buffer.alloc(0), 'empty.txt'],
    ])('answers 415 for %s, storing nothing', async (_label, bytes, filename) => {
      const [files, rows] = [storedFiles().length, await mediaRows()]
      expectErrorBody(await upload(t, { token: alice.token, files: [{ bytes, filename, type: 'image/png' }] }), 415, 'UNSUPPORTED_MEDIA_TYPE')
      expect(storedFiles()).toHaveLength(files)
      expect(await mediaRows()).toBe(rows)
    })

    describe('DOCX (larger than this app\'s limit: an app of its own)', () => {
      let big: TestApp
      beforeAll(async () => {
        big = await createTestApp()
      })
      afterAll(async () => big?.close())

      it('types a DOCX from its bytes, reading the whole ZIP archive, and serves it as an attachment', async () => {
        const user = await big.make.user()
        const bytes = await makeDocx({ heading: 'Handbook', paragraphs: ['Holidays: 25 days a year.'] })
        const res = await upload(big, { token: user.token, files: [{ bytes, filename: 'handbook.bin', type: 'application/octet-stream' }] })
        expect(res.status, JSON.stringify(res.body)).toBe(201)
        expect(res.body.data).toMatchObject({ mime_type: DOCX, size: bytes.length })
        expect(res.body.data.key).toMatch(/\.docx$/)
        expect(readFileSync(path.join(big.config.dataDir, 'media', res.body.data.key))).toEqual(bytes)
        const served = await fetch(res.body.data.url.replace(big.config.appUrl, big.url))
        expect(served.headers.get('content-type')).toBe(DOCX)
        expect(served.headers.get('content-disposition')).toMatch(/^attachment; /)
        expect(Buffer.from(await served.arrayBuffer())).toEqual(bytes)
      })
    })

    it('answers 413 past UPLOAD_MAX_BYTES (text and binary), accepting exactly the limit, storing nothing', async () => {
      const exact = await upload(t, { token: alice.token, files: [{ bytes: Buffer.alloc(LIMIT, 'a'), filename: 'exact.txt' }] })
      expect(exact.status).toBe(201)
      expect(exact.body.data.size).toBe(LIMIT)
      const [files, rows] = [storedFiles().length, await mediaRows()]
      expectErrorBody(await upload(t, { token: alice.token, files: [{ bytes: Buffer.alloc(LIMIT + 1, 'a'), filename: 'big.txt' }] }), 413, 'PAYLOAD_TOO_LARGE')
      const bigPng = Buffer.concat([PNG, Buffer.alloc(LIMIT * 20)])
      expectErrorBody(await upload(t, { token: alice.token, files: [{ bytes: bigPng, filename: 'big.png' }] }), 413, 'PAYLOAD_TOO_LARGE')
      expect(storedFiles()).toHaveLength(files)
      expect(await mediaRows()).toBe(rows)
    })

    it('answers 400 naming file when there is no file, or the file is a text field; naming any other field', async () => {
      const rows = await mediaRows()
      const empty = await upload(t, { token: alice.token, fields: {} })
      expectIssues(empty, [['file']])
      expect(empty.body.message).toBe(VALIDATION_MESSAGE)
      expectIssues(await upload(t, { token: alice.token, fields: { file: 'not a file' } }), [['file']])
      expectIssues(await upload(t, { token: alice.token, files: [{ bytes: PNG, filename: 'a.png', field: 'photo' }] }), [['photo']])
      expectIssues(await upload(t, { token: alice.token, fields: { name: 'x' }, files: [{ bytes: PNG, filename: 'a.png' }] }), [['name']])
      expectIssues(await upload(t, { token: alice.token, files: [{ bytes: PNG, filename: 'a.png' }], fields: { workspace_uuid: alice.workspaceUuid } }), [
        ['workspace_uuid'],
      ])
      expect(await mediaRows()).toBe(rows)
    })

    it('answers 400 naming file for two files, keeping neither', async () => {
      const [files, rows] = [storedFiles().length, await mediaRows()]
      const res = await upload(t, { token: alice.token, files: [{ bytes: PNG, filename: 'a.png' }, { bytes: PDF, filename: 'b.pdf' }] })
      expectIssues(res, [['file']])
      expect(storedFiles()).toHaveLength(files)
      expect(await mediaRows()).toBe(rows)
    })

    it('answers 415 for a body that is not multipart (JSON, text, none)', async () => {
      expectErrorBody(await t.http('POST', '/api/v1/media', { token: alice.token, body: { file: 'x' } }), 415, 'UNSUPPORTED_MEDIA_TYPE')
      expectErrorBody(
        await t.http('POST', '/api/v1/media', { token: alice.token, rawBody: 'hello', headers: { 'content-type': 'text/plain' } }),
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      )
      expectErrorBody(await t.http('POST', '/api/v1/media', { token: alice.token }), 415, 'UNSUPPORTED_MEDIA_TYPE')
      expectErrorBody(
        await t.http('POST', '/api/v1/media', { token: alice.token, rawBody: '{bad json', headers: { 'content-type': 'application/json' } }),
        415,
        'UNSUPPORTED_MEDIA_TYPE',
      )
    })

    it('answers 400 for a malformed multipart body (no boundary, cut short)', async () => {
      const raw = (body: string, type: string) =>
        t.http('POST', '/api/v1/media', { token: alice.token, rawBody: body, headers: { 'content-type': type } })
      expectErrorBody(await raw('--x\r\n', 'multipart/form-data'), 400, 'BAD_REQUEST')
      const cut = await raw('--X\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nhello', 'multipart/form-data; boundary=X')
      expect(cut.status).toBe(400)
      expect(cut.body.code).toBe('BAD_REQUEST')
      expect(storedFiles().some((name) => name.endsWith('.part'))).toBe(false)
    })

    it('answers 401 without a token, with a bad token or a bad service key; 403 to a read-only token; storing nothing', async () => {
      const rows = await mediaRows()
      const files = [{ bytes: PNG, filename: 'a.png' }]
      expectErrorBody(await upload(t, { files }), 401, 'UNAUTHORIZED', 'Missing bearer token')
      expectErrorBody(await upload(t, { token: 'wst_notarealtokenatallxxxxxxxxxxxxxxx', files }), 401, 'UNAUTHORIZED')
      expectErrorBody(await upload(t, { token: alice.token, files, headers: { 'x-service-authorization': 'wrong-key-0123456789' } }), 401, 'UNAUTHORIZED')
      // alice signed up without a service key: under ACME's key her token is unknown.
      expectErrorBody(await upload(t, { token: alice.token, files, headers: { 'x-service-authorization': ACME_KEY } }), 401, 'UNAUTHORIZED')
      expectErrorBody(await upload(t, { token: (await readOnlyToken(t, alice)).token, files }), 403, 'FORBIDDEN', 'This token is read-only')
      expect(await mediaRows()).toBe(rows)
    })

    it('works for a user of a service scope with that scope\'s key', async () => {
      const scoped = await t.make.user({ serviceKey: ACME_KEY })
      const res = await upload(t, { token: scoped.token, files: [{ bytes: PNG, filename: 'a.png' }], headers: { 'x-service-authorization': ACME_KEY } })
      expect(res.status).toBe(201)
    })
  })

  describe('GET /api/v1/media/{key}', () => {
    it('serves an image inline with its type, length, nosniff, a sandboxing CSP and long caching; no token needed', async () => {
      const { body } = await upload(t, { token: alice.token, files: [{ bytes: PNG, filename: 'Ünïcode photo (1).png' }] })
      const res = await fetchUrl(body.data.url)
      expect(res.status).toBe(200)
      expect(Buffer.from(await res.arrayBuffer())).toEqual(PNG)
      expect(res.headers.get('content-type')).toBe('image/png')
      expect(res.headers.get('content-length')).toBe(String(PNG.length))
      expect(res.headers.get('x-content-type-options')).toBe('nosniff')
      expect(res.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox")
      expect(res.headers.get('cache-control')).toContain('immutable')
      expect(res.headers.get('content-disposition')).toBe(
        `inline; filename="${body.data.key}"; filename*=UTF-8''%C3%9Cn%C3%AFcode%20photo%20%281%29.png`,
      )
    })

    it('serves other files as attachments; text with charset=utf-8', async () => {
      const pdf = await upload(t, { token: alice.token, files: [{ bytes: PDF, filename: 'doc.pdf' }] })
      const pdfRes = await fetchUrl(pdf.body.data.url)
      expect(pdfRes.headers.get('content-type')).toBe('application/pdf')
      expect(pdfRes.headers.get('content-disposition')).toMatch(/^attachment; /)
      const md = await upload(t, { token: alice.token, files: [{ bytes: '# Hi', filename: 'a.md' }] })
      const mdRes = await fetchUrl(md.body.data.url)
      expect(mdRes.headers.get('content-type')).toBe('text/markdown; charset=utf-8')
      expect(mdRes.headers.get('content-disposition')).toMatch(/^attachment; /)
      expect(await mdRes.text()).toBe('# Hi')
      // An HTML page is data: sent for download, under a CSP that would sandbox it if opened.
      const html = await upload(t, { token: alice.token, files: [{ bytes: '<script>alert(1)</script>', filename: 'page.html' }] })
      const htmlRes = await fetchUrl(html.body.data.url)
      expect(htmlRes.headers.get('content-type')).toBe('text/html; charset=utf-8')
      expect(htmlRes.headers.get('content-disposition')).toMatch(/^attachment; /)
      expect(htmlRes.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox")
      expect(htmlRes.headers.get('x-content-type-options')).toBe('nosniff')
    })

    it('answers 404 with the JSON error body for unknown, odd or hostile keys', async () => {
      for (const key of ['01234567-89ab-7def-8123-456789abcdef.png', 'nope', '..%2F..%2Fapp.key', '%00', 'k'.repeat(300), '%F0%9F%98%80']) {
        const res = await t.http('GET', `/api/v1/media/${key}`)
        expectErrorBody(res, 404, 'NOT_FOUND', 'Media not found')
      }
    })

    it('answers 404 when the row exists but its object is gone', async () => {
      const { body } = await upload(t, { token: alice.token, files: [{ bytes: PNG, filename: 'a.png' }] })
      await new LocalStorage(mediaDir()).delete(body.data.key)
      expectErrorBody(await t.http('GET', `/api/v1/media/${body.data.key}`), 404, 'NOT_FOUND')
    })
  })

  describe('LocalStorage', () => {
    it('puts, gets and deletes objects; a missing object is null; deleting twice is fine', async () => {
      const storage = new LocalStorage(await mkdtemp(path.join(tmpdir(), 'aw-storage-')))
      expect(await storage.put('a.txt', Buffer.from('hello'))).toBe(5)
      expect(await storage.put('b.txt', Readable.from([Buffer.from('str'), Buffer.from('eam')]))).toBe(6)
      const got = await storage.get('b.txt')
      expect(got?.size).toBe(6)
      const chunks: Buffer[] = []
      for await (const chunk of got!.body) chunks.push(chunk)
      expect(Buffer.concat(chunks).toString()).toBe('stream')
      await storage.delete('a.txt')
      await storage.delete('a.txt')
      expect(await storage.get('a.txt')).toBeNull()
    })

    it('refuses keys that could leave its folder', async () => {
      const storage = new LocalStorage(await mkdtemp(path.join(tmpdir(), 'aw-storage-')))
      for (const key of ['../x', 'a/b', '..', '.hidden', '', 'a\\b']) {
        await expect(storage.put(key, Buffer.from('x'))).rejects.toThrow('Invalid storage key')
        await expect(storage.get(key)).rejects.toThrow('Invalid storage key')
      }
    })

    it('leaves nothing behind when the body fails mid-way', async () => {
      const root = await mkdtemp(path.join(tmpdir(), 'aw-storage-'))
      const storage = new LocalStorage(root)
      async function* failing() {
        yield Buffer.from('partial')
        throw new Error('client went away')
      }
      await expect(storage.put('c.txt', Readable.from(failing()))).rejects.toThrow('client went away')
      expect(readdirSync(root)).toEqual([])
    })
  })
})
