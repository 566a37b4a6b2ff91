/**
 * The reference at `/docs` in a real browser (Debian's chromium through playwright-core): it
 * renders the document, its search finds operations, its try-it client calls the service, and the
 * page asks nothing of any other origin. Skipped when /usr/bin/chromium is missing, unless
 * REQUIRE_BROWSER=1 (CI sets it), which turns a missing browser into a failure.
 */
import { existsSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import { chromium, type Browser, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp } from './helpers/app.ts'

const CHROMIUM = '/usr/bin/chromium'
const SCREENSHOT = 'test-artifacts/docs.png'
const SCREENSHOT_OPERATION = 'test-artifacts/docs-create-agent.png'
const SCREENSHOT_TRY_IT = 'test-artifacts/docs-try-it.png'
const haveBrowser = existsSync(CHROMIUM)
const requireBrowser = process.env.REQUIRE_BROWSER === '1'

// Nothing of the machine's own: no first-run, sync, update or background traffic to count as the page's.
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

if (!haveBrowser && !requireBrowser) {
  describe('GET /docs in a browser', () => {
    it.skip(`skipped: ${CHROMIUM} is missing (apt-get install chromium; REQUIRE_BROWSER=1 makes this a failure)`, () => {})
  })
} else {
  describe('GET /docs in a browser', () => {
    let t: TestApp
    let browser: Browser
    let page: Page
    /** Every request the page made to another origin. */
    const outside: string[] = []
    /** Content-Security-Policy violations and uncaught errors in the page. */
    const pageErrors: string[] = []

    beforeAll(async () => {
      if (!haveBrowser) throw new Error(`REQUIRE_BROWSER=1 but ${CHROMIUM} is missing (apt-get install chromium)`)
      t = await createTestApp()
      browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
      page = await browser.newPage({ viewport: { width: 1440, height: 900 } })
      const origin = new URL(t.url).origin
      page.on('request', (request) => {
        const url = new URL(request.url())
        if (url.protocol !== 'data:' && url.protocol !== 'blob:' && url.origin !== origin) outside.push(request.url())
      })
      page.on('console', (message) => {
        if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) pageErrors.push(message.text())
      })
      page.on('pageerror', (error) => pageErrors.push(error.message))
    })

    afterAll(async () => {
      await browser?.close()
      await t?.close()
    })

    it('renders the reference with "Getting a token" first, and asks no other origin for anything', async () => {
      const res = await t.http('GET', '/docs')
      expect(res.headers.get('content-security-policy')).toContain("script-src 'self'")

      await page.goto(`${t.url}/docs`)
      await expect.poll(() => page.title()).toBe('Agent Workspace Service API reference')
      await page.getByRole('heading', { name: 'Agent Workspace Service' }).waitFor({ timeout: 60_000 })
      const gettingAToken = page.getByRole('heading', { name: 'Getting a token' })
      await gettingAToken.waitFor()
      await expect.poll(() => page.getByText('/api/v1/auth/sign-up').first().isVisible()).toBe(true)
      await mkdir('test-artifacts', { recursive: true })
      await page.screenshot({ path: SCREENSHOT })
      expect(outside).toEqual([])
      expect(pageErrors).toEqual([])
    })

    it('shows an operation with its body, its error answers and their examples', async () => {
      // Operations are listed by their summaries, grouped by tag in the sidebar.
      await page
        .getByRole('button', { name: /Agents/ })
        .first()
        .click()
      await page.getByText('Create an agent').first().click()
      await page.getByRole('heading', { name: 'Create an agent' }).waitFor()
      await expect.poll(() => page.url()).toContain('#tag/agents/POST/api/v1/agents')
      await page.screenshot({ path: SCREENSHOT_OPERATION })
      // The answer examples, one tab per status: the error answers carry their example bodies.
      await page.getByRole('tab', { name: '404' }).first().click()
      await expect.poll(() => page.getByText('"Workspace not found"').first().isVisible()).toBe(true)
      await page.getByRole('tab', { name: '400' }).first().click()
      await expect.poll(() => page.getByText('"Input validation failed"').first().isVisible()).toBe(true)
    })

    it('finds an operation through its search', async () => {
      await page.getByRole('button', { name: /Open Search/ }).click()
      await page.keyboard.type('Create an agent')
      const results = page.getByRole('dialog')
      await expect.poll(() => results.innerText()).toMatch(/Create an agent[\s\S]*\/api\/v1\/agents/)
      await page.keyboard.press('Escape')
    })

    it('sends GET /api/v1/ping from its try-it client and shows the 200 answer', async () => {
      await page.getByText('Answer without touching the database').first().click()
      await expect.poll(() => page.url()).toContain('#tag/system/GET/api/v1/ping')
      const pinged = page.waitForResponse((response) => response.url() === `${t.url}/api/v1/ping`)
      await page
        .getByRole('button', { name: /Test Request/ })
        .first()
        .click()
      await page
        .getByRole('button', { name: /Send get request to .*\/api\/v1\/ping/ })
        .first()
        .click()
      expect((await pinged).status()).toBe(200)
      await expect.poll(() => page.getByText('200 OK').first().isVisible()).toBe(true)
      await expect.poll(() => page.getByText('"status"').first().isVisible()).toBe(true)
      await page.screenshot({ path: SCREENSHOT_TRY_IT })
      expect(outside).toEqual([])
      expect(pageErrors).toEqual([])
    })
  })
}
