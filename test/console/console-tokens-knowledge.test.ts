/**
 * The console's access tokens and knowledge screens in a real browser: an application token made
 * on the screen, its plaintext shown once and working over REST, then revoked (401 over REST); an
 * agent trained with a text on the screen, followed until its document is ready (embedded by the
 * local model server) and checked over REST, a bad URL answered at its field, the document
 * deleted; files dropped on the knowledge screen uploaded (a refused one said in words) and trained
 * to ready; an agent's photo uploaded and saved, and the agent shared with a member picked by
 * e-mail (each checked over REST); a web page trained with a daily refresh, its chunks read, its
 * refresh changed, synced after the page changed and after it began to fail (each checked over
 * REST); both screens at 360 px.
 */
import { createServer, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { describeConsole } from '../helpers/console.ts'

/** `YYYY-MM-DD` of the day `days` from now, in this process's zone (the browser's too). */
function dayFromNow(days: number): string {
  const date = new Date(Date.now() + days * 86_400_000)
  return `${date.getFullYear()}-${String(date.getMonth() + 1).padStart(2, '0')}-${String(date.getDate()).padStart(2, '0')}`
}

/** A 1×1 PNG. */
const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64')

describeConsole(
  'web console: access tokens and knowledge',
  (t) => {
    /** A web page on loopback whose text and status the test changes. */
    const site = { text: 'Opening hours: the library opens at nine.', status: 200, url: '' }
    let pageServer: Server
    beforeAll(async () => {
      pageServer = createServer((request, response) => {
        const html = (body: string) => `<html><head><title>Library</title></head><body>${body}</body></html>`
        // A small site under /guide/ for the crawl: its root links to one page; no robots.txt, no sitemap.
        if (request.url === '/robots.txt' || request.url === '/sitemap.xml') return void response.writeHead(404).end()
        if (request.url?.startsWith('/guide/')) {
          response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' })
          return void response.end(
            html(
              request.url === '/guide/'
                ? '<p>The guide starts here.</p><a href="/guide/lending">Lending</a>'
                : '<p>Books are lent for three weeks.</p>',
            ),
          )
        }
        response.writeHead(site.status, { 'content-type': 'text/html; charset=utf-8' })
        response.end(html(`<p>${site.text}</p>`))
      })
      await new Promise<void>((resolve) => pageServer.listen(0, '127.0.0.1', resolve))
      site.url = `http://127.0.0.1:${(pageServer.address() as AddressInfo).port}/library`
    })
    afterAll(() => new Promise<void>((resolve) => (pageServer ? pageServer.close(() => resolve()) : resolve())))

    it('trains from a web page synced daily, reads its chunks, changes its refresh and syncs it', async () => {
      const user = await t.user()
      const agent = await t.server.http('POST', '/api/v1/agents', {
        token: user.token,
        body: { name: 'Library bot', metadata: { knowledge: true } },
      })
      const agentUuid: string = agent.body.data.uuid
      const page = await t.newPage()
      await t.open(page, user, `/knowledge?agent=${agentUuid}`)
      await page.getByText('Not trained yet').waitFor()
      await page.getByText('Web page', { exact: true }).click()
      await page.getByRole('textbox', { name: 'URL' }).fill(site.url)
      await page.getByRole('combobox', { name: 'Refresh' }).click()
      await page.getByRole('option', { name: 'Daily' }).click()
      await page.getByRole('button', { name: 'Train agent' }).click()
      const name = /Library|127\.0\.0\.1/
      const row = page.getByRole('row', { name })
      await row.getByText(/^Synced /).waitFor({ timeout: 60_000 })
      const listed = async () => (await t.server.http('GET', `/api/v1/agents/${agentUuid}/knowledge`, { token: user.token })).body.data[0]
      const trained = await listed()
      expect(trained).toMatchObject({ source_type: 'url', status: 'ready', refresh: 'daily', sync_error: null })
      expect(trained.next_sync_at).not.toBeNull()

      // The chunks dialog shows what the agent's runs may be given.
      await row.getByRole('button', { name: /^Chunks of / }).click()
      const chunks = page.getByRole('dialog', { name: /^Chunks of / })
      await chunks.getByText('Opening hours: the library opens at nine.').waitFor()
      await chunks.getByText(/^Chunk 1 · \d+ tokens$/).waitFor()
      await page.keyboard.press('Escape')
      await chunks.waitFor({ state: 'detached' })

      // The refresh changes in place.
      await row.getByRole('combobox', { name: /^Refresh of / }).click()
      await page.getByRole('option', { name: 'Weekly' }).click()
      await expect.poll(async () => (await listed()).refresh).toBe('weekly')

      // The page changed: Sync replaces the chunks, and the list shows the new sync.
      site.text = 'Opening hours: the library now opens at eight.'
      await row.getByRole('button', { name: /^Sync / }).click()
      await expect.poll(async () => (await listed()).content_hash, { timeout: 30_000 }).not.toBe(trained.content_hash)
      await row.getByRole('button', { name: /^Chunks of / }).click()
      await chunks.getByText('Opening hours: the library now opens at eight.').waitFor()
      await page.keyboard.press('Escape')

      // The page fails: the sync's error is shown, and the chunks stay.
      site.status = 500
      await row.getByRole('button', { name: /^Sync / }).click()
      await row
        .getByLabel(/^Sync error of /)
        .getByText(/^Last sync failed: /)
        .waitFor({ timeout: 30_000 })
      await t.screenshot(page, 'knowledge-url-sync')
      const failed = await listed()
      expect(failed.sync_error).not.toBeNull()
      expect(failed).toMatchObject({ status: 'ready', chunks_count: 1 })
      site.status = 200

      // A crawl of the site under a URL: each page it links to becomes a document of its own.
      await page.getByRole('textbox', { name: 'URL' }).fill(new URL('/guide/', site.url).toString())
      await page.getByRole('checkbox', { name: 'Crawl the site under this URL' }).check()
      await page.getByRole('textbox', { name: 'Pages at most' }).fill('5')
      await page.getByRole('textbox', { name: 'Link depth' }).fill('1')
      await page.getByRole('button', { name: 'Train agent' }).click()
      await page.getByText('Crawls the site under it: 5 pages at most, 1 links deep').waitFor({ timeout: 30_000 })
      await page.getByText('Found by a crawl; synced with its root').waitFor({ timeout: 60_000 })
      await t.screenshot(page, 'knowledge-crawl')
      const all = (await t.server.http('GET', `/api/v1/agents/${agentUuid}/knowledge?per_page=50`, { token: user.token })).body.data
      const root = all.find((document: { url: string }) => document.url.endsWith('/guide/'))
      expect(root.crawl).toEqual({ max_pages: 5, max_depth: 1 })
      expect(all.find((document: { url: string }) => document.url.endsWith('/guide/lending')).crawl_root_uuid).toBe(root.uuid)
    }, 150_000)

    it('creates a read-only application token, shows it once, and revokes it', async () => {
      const user = await t.user('Token Owner')
      const page = await t.newPage()
      await t.open(page, user, '/tokens')
      await page.getByText('No application tokens').waitFor()

      await page.getByRole('button', { name: 'New token' }).click()
      const dialog = page.getByRole('dialog', { name: 'New application token' })
      await dialog.getByRole('textbox', { name: 'Name' }).fill('Deploy bot')
      const expires = dayFromNow(365)
      await dialog.getByLabel('Expires on').fill(expires)
      await dialog.getByRole('combobox', { name: 'Workspace' }).click()
      await page.getByRole('option', { name: "Token's Workspace" }).click()
      await dialog.getByText('Read only (every change is refused)').click()
      await dialog.getByRole('button', { name: 'Create token' }).click()

      const shown = page.getByRole('dialog', { name: 'Token created' })
      await shown.getByText('This is the only time the token is shown').waitFor()
      await shown.getByRole('button', { name: 'Copy token' }).waitFor()
      const plaintext = await shown.getByRole('textbox', { name: /Your new token/ }).inputValue()
      expect(plaintext).toMatch(/^wat_[A-Za-z0-9_-]{40,}$/)
      await t.screenshot(page, 'token-created')

      // The plaintext works over REST, and the token is stored as asked.
      const me = await t.server.http('GET', '/api/v1/user', { token: plaintext })
      expect(me.status).toBe(200)
      expect(me.body.data.email).toBe(user.email)
      const listed = await t.server.http('GET', '/api/v1/access-tokens', { token: user.token })
      expect(listed.body.data).toHaveLength(1)
      const stored = listed.body.data[0]
      expect(stored).toMatchObject({ name: 'Deploy bot', kind: 'application', abilities: ['read'], workspace_uuid: user.workspaceUuid })
      const expiresAt = new Date(stored.expires_at)
      expect(
        `${expiresAt.getFullYear()}-${String(expiresAt.getMonth() + 1).padStart(2, '0')}-${String(expiresAt.getDate()).padStart(2, '0')}`,
      ).toBe(expires)

      // Once closed, the plaintext is nowhere on the page; the list shows the token and its use.
      await shown.getByRole('button', { name: 'Done' }).click()
      await shown.waitFor({ state: 'detached' })
      expect(await page.content()).not.toContain(plaintext)
      await expect
        .poll(async () => (await t.server.http('GET', '/api/v1/access-tokens', { token: user.token })).body.data[0].last_used_at)
        .not.toBeNull()
      await page.reload()
      const row = page.getByRole('row', { name: /Deploy bot/ })
      await row.getByText('read only').waitFor()
      await row.getByText("Token's Workspace").waitFor()
      await expect.poll(() => row.textContent()).not.toContain('Never')
      await t.screenshot(page, 'tokens')

      // Revoked after the confirmation: the token answers 401.
      await row.getByRole('button', { name: 'Revoke Deploy bot' }).click()
      await page.getByRole('dialog', { name: 'Revoke this token?' }).getByRole('button', { name: 'Revoke token' }).click()
      await page.getByText('No application tokens').waitFor()
      const revoked = await t.server.http('GET', '/api/v1/user', { token: plaintext })
      expect(revoked.status).toBe(401)
      expect((await t.server.http('GET', '/api/v1/user', { token: user.token })).status).toBe(200)
    }, 90_000)

    it('trains an agent with a text and with dropped files, follows them to ready, and deletes a document', async () => {
      const user = await t.user()
      const agent = await t.server.http('POST', '/api/v1/agents', {
        token: user.token,
        body: { name: 'Handbook bot', description: 'Answers from the handbook', metadata: { knowledge: true } },
      })
      expect(agent.status).toBe(201)
      const agentUuid: string = agent.body.data.uuid
      const page = await t.newPage()
      await t.open(page, user, '/knowledge')
      await page.getByRole('combobox', { name: 'Agent' }).click()
      await page.getByRole('option', { name: 'Handbook bot' }).click()
      await page.waitForURL((url) => url.searchParams.get('agent') === agentUuid)
      await page.getByText('Not trained yet').waitFor()

      // A URL the service refuses is answered at the URL field, and nothing is stored.
      await page.getByText('Web page', { exact: true }).click()
      const url = page.getByRole('textbox', { name: 'URL' })
      await url.fill('ftp://example.com/handbook')
      await page.getByRole('button', { name: 'Train agent' }).click()
      await expect.poll(() => url.getAttribute('aria-invalid')).toBe('true')
      await page.getByText('Only http and https URLs can be trained').waitFor()

      await page.getByText('Text', { exact: true }).click()
      await page.getByRole('textbox', { name: 'Name' }).fill('Holidays')
      await page
        .getByRole('textbox', { name: 'Text' })
        .fill('Every employee has 25 days of paid holiday a year. Ask your manager two weeks ahead.')
      await page.getByRole('button', { name: 'Train agent' }).click()
      await page.getByRole('row', { name: /Holidays/ }).waitFor()
      // Ingestion runs in the job queue: the list refreshes itself until the document is ready.
      await page.getByLabel('Status of Holidays: ready').waitFor({ timeout: 60_000 })
      await page
        .getByRole('row', { name: /Holidays/ })
        .getByText(/^1 \(\d+ tokens\)$/)
        .waitFor()
      await t.screenshot(page, 'knowledge')

      const documents = await t.server.http('GET', `/api/v1/agents/${agentUuid}/knowledge`, { token: user.token })
      expect(documents.status).toBe(200)
      expect(documents.body.data).toHaveLength(1)
      expect(documents.body.data[0]).toMatchObject({ name: 'Holidays', source_type: 'text', status: 'ready', error: null, chunks_count: 1 })
      // Chunks are embedded only where the database has pgvector (hybrid retrieval, docs/api/knowledge.md).
      const ready = await t.server.http('GET', '/ready')
      const embedded = t.upstream.requests.some((request) => request.path.startsWith('/v1/embeddings'))
      expect(embedded).toBe(ready.body.knowledge === 'hybrid')
      const search = await t.server.http('POST', `/api/v1/agents/${agentUuid}/knowledge/search`, {
        token: user.token,
        body: { query: 'paid holiday' },
      })
      expect(search.body.data[0].document_name).toBe('Holidays')

      await page.getByRole('button', { name: 'Delete Holidays' }).click()
      await page.getByRole('dialog', { name: 'Delete this document?' }).getByRole('button', { name: 'Delete document' }).click()
      await page.getByText('Not trained yet').waitFor()
      const after = await t.server.http('GET', `/api/v1/agents/${agentUuid}/knowledge`, { token: user.token })
      expect(after.body.data).toHaveLength(0)

      // Files dropped on the screen are uploaded at once (one the service refuses, a text file with a
      // NUL, said in words and left out), then trained together.
      await page.getByText('Files', { exact: true }).click()
      await page.getByLabel('Files to train from').setInputFiles([
        {
          name: 'expenses.md',
          mimeType: 'text/markdown',
          buffer: Buffer.from('# Expenses\n\nFile every receipt within 30 days of the purchase.\n'),
        },
        { name: 'broken.txt', mimeType: 'text/plain', buffer: Buffer.from('half\u0000text') },
      ])
      await page
        .getByRole('alert')
        .getByText('“broken.txt” is not a type the service accepts: A text file must be UTF-8 without NUL characters')
        .waitFor()
      const listed = page.getByRole('table', { name: 'Files to train' })
      await listed.getByText('expenses.md').waitFor()
      expect(await listed.getByRole('row').count()).toBe(1)
      await t.screenshot(page, 'knowledge-files')
      await page.getByRole('button', { name: 'Train agent' }).click()
      await page.getByLabel('Status of expenses.md: ready').waitFor({ timeout: 60_000 })
      await listed.waitFor({ state: 'detached' })
      const trained = await t.server.http('GET', `/api/v1/agents/${agentUuid}/knowledge`, { token: user.token })
      expect(trained.body.data).toHaveLength(1)
      const file = trained.body.data[0]
      expect(file).toMatchObject({ name: 'expenses.md', source_type: 'file', mime_type: 'text/markdown', status: 'ready', error: null })
      // The document's file is the upload's, readable at the link the list shows.
      const href = await page.getByRole('link', { name: 'Download expenses.md' }).getAttribute('href')
      expect(href).toBe(`/api/v1/media/${file.media_key}`)
      const download = await fetch(`${t.server.url}${href}`)
      expect(await download.text()).toContain('File every receipt within 30 days')
    }, 150_000)

    it("uploads an agent's photo, and shares the agent with a member picked by e-mail", async () => {
      const owner = await t.user('Photo Owner')
      const colleague = await t.user('Colleague Person')
      const member = await t.server.http('POST', `/api/v1/workspaces/${owner.workspaceUuid}/members`, {
        token: owner.token,
        body: { email: colleague.email },
      })
      expect(member.status).toBe(201)
      const agent = await t.server.http('POST', '/api/v1/agents', { token: owner.token, body: { name: 'Portrait bot', description: 'x' } })
      const agentUuid: string = agent.body.data.uuid
      const page = await t.newPage()
      await t.open(page, owner, `/agents/${agentUuid}`)
      await page.getByRole('button', { name: 'Photo', exact: true }).click()
      // A type the browser can tell is refused (an SVG) is said and never sent.
      const photoInput = page.locator('input[type="file"][aria-label="Photo"]')
      await photoInput.setInputFiles({
        name: 'logo.svg',
        mimeType: 'image/svg+xml',
        buffer: Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>'),
      })
      await page.getByText('“logo.svg”: not a type accepted here').waitFor()
      await photoInput.setInputFiles({ name: 'face.png', mimeType: 'image/png', buffer: PNG })
      await page.getByText('“face.png” uploaded; save the agent to use it.').waitFor()
      await page.getByRole('img', { name: 'New photo' }).waitFor()
      // Drawn from the upload's URL: loaded, one pixel wide.
      await expect
        .poll(() =>
          page.evaluate<number>(
            `(() => { const img = document.querySelector('img[alt="New photo"]'); return img?.complete ? img.naturalWidth : 0 })()`,
          ),
        )
        .toBe(1)
      await t.screenshot(page, 'agent-photo')
      await page.getByRole('button', { name: 'Save', exact: true }).click()
      await page.getByRole('img', { name: 'Current photo' }).waitFor()
      const stored = await t.server.http('GET', `/api/v1/agents/${agentUuid}`, { token: owner.token })
      expect(stored.body.data.profile_photo_url).toMatch(/\/api\/v1\/media\/[^/]+\.png$/)
      const photo = await fetch(stored.body.data.profile_photo_url)
      expect(photo.headers.get('content-type')).toBe('image/png')
      expect(Buffer.from(await photo.arrayBuffer()).equals(PNG)).toBe(true)

      // Shared with the colleague found by e-mail among the workspace's members; no id is typed.
      const sharing = page.getByRole('region', { name: 'Sharing' })
      const who = sharing.getByRole('combobox', { name: 'User' })
      await who.fill(colleague.email)
      await page.getByRole('option', { name: `Colleague Person <${colleague.email}>` }).click()
      await sharing.getByRole('combobox', { name: 'Permission' }).click()
      await page.getByRole('option', { name: 'Write: also change' }).click()
      await sharing.getByRole('button', { name: 'Share' }).click()
      await sharing.getByRole('row', { name: new RegExp(`Colleague Person <${colleague.email.replace(/[.+]/g, '\\$&')}>`) }).waitFor()
      await t.screenshot(page, 'agent-shared')
      const shared = await t.server.http('GET', `/api/v1/agents/${agentUuid}`, { token: owner.token })
      expect(shared.body.data.shares).toEqual([
        expect.objectContaining({ entity_type: 'user', permission: 'write', entity: expect.objectContaining({ email: colleague.email }) }),
      ])
      const seen = await t.server.http('GET', `/api/v1/agents/${agentUuid}`, {
        token: colleague.token,
        headers: { 'x-workspace-uuid': owner.workspaceUuid },
      })
      expect(seen.status).toBe(200)
    }, 90_000)

    it('fits the tokens and knowledge screens in 360 px, and says when an agent is not found', async () => {
      const user = await t.user()
      const token = await t.server.http('POST', '/api/v1/access-tokens', {
        token: user.token,
        body: { name: `An integration with a very long name ${'n'.repeat(150)}` },
      })
      expect(token.status).toBe(201)
      const agent = await t.server.http('POST', '/api/v1/agents', { token: user.token, body: { name: 'Narrow agent', description: 'x' } })
      const trained = await t.server.http('POST', `/api/v1/agents/${agent.body.data.uuid}/train`, {
        token: user.token,
        body: {
          sources: [{ type: 'text', name: `A document with a name far longer than the screen ${'d'.repeat(150)}`, text: 'Short text.' }],
        },
      })
      expect(trained.status).toBe(202)
      const page = await t.newPage({ width: 360, height: 740 })
      await t.open(page, user, '/tokens')
      await page.getByRole('row', { name: /An integration/ }).waitFor()
      expect(
        await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth'),
      ).toBeLessThanOrEqual(0)
      await t.screenshot(page, 'tokens-360')

      await page.goto(`${t.server.url}/console/knowledge?agent=${agent.body.data.uuid}`)
      await page.getByRole('row', { name: /A document with a name/ }).waitFor()
      // Knowledge is off for this agent: the screen says where to turn it on.
      await page.getByText('Knowledge is off for this agent').waitFor()
      expect(
        await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth'),
      ).toBeLessThanOrEqual(0)
      await t.screenshot(page, 'knowledge-360')

      await page.goto(`${t.server.url}/console/knowledge?agent=00000000-0000-4000-8000-000000000000`)
      await page.getByRole('alert').getByText('Not found').waitFor()
    }, 90_000)
  },
  // The web page the knowledge test trains from is on loopback.
  { TOOL_ALLOW_PRIVATE_NETWORK: 'true' },
)
