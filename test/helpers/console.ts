/**
 * The web console in a real browser (docs/console.md, "Tests"): a started service (`npm start`'s
 * src/server.ts as a process, on the suite's storage) whose OpenAI provider is the local model
 * server of ./upstream.ts, and Debian's chromium driven by playwright-core. Screens are kept as
 * screenshots in test-artifacts/console/ (CI keeps them as artifacts).
 *
 * Without /usr/bin/chromium a suite is skipped, saying why, unless REQUIRE_BROWSER=1 (CI), which
 * makes it fail.
 */
import { existsSync } from 'node:fs'
import { mkdir } from 'node:fs/promises'
import path from 'node:path'
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core'
import { afterAll, beforeAll, describe, onTestFailed } from 'vitest'
import { freePort } from './ports.ts'
import { processEnv, startProcess, stopProcess, type ServerProcess } from './processes.ts'
import { httpClient } from './app.ts'
import { startUpstream, type Upstream } from './upstream.ts'

export const CHROMIUM = '/usr/bin/chromium'
const haveBrowser = existsSync(CHROMIUM)
const requireBrowser = process.env.REQUIRE_BROWSER === '1'

/** Nothing of the browser's own: no first-run, sync, update or background traffic. */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

/** Where the screenshots go. */
export const CONSOLE_ARTIFACTS = 'test-artifacts/console'

/** A user signed up through the API, with the token the console keeps. */
export interface ConsoleUser {
  name: string
  email: string
  password: string
  token: string
  workspaceUuid: string
}

/** What a console suite's tests get, set in its `beforeAll`. */
export interface ConsoleSuite {
  server: ServerProcess
  upstream: Upstream
  browser: Browser
  /** A new browser context and page (desktop size unless given), closed after the suite. */
  newPage: (viewport?: { width: number; height: number }) => Promise<Page>
  /** Signs a new user up over the API (not the screen). */
  user: (name?: string) => Promise<ConsoleUser>
  /** Opens `path` (under /console) signed in as `user`: the token is put where the console keeps it. */
  open: (page: Page, user: ConsoleUser, path: string) => Promise<void>
  /** Saves a screenshot of the whole page as test-artifacts/console/<name>.png. */
  screenshot: (page: Page, name: string) => Promise<void>
  /** Stops the service (SIGTERM, graceful) and starts it again on the same port and storage. */
  restart: () => Promise<void>
}

/**
 * Declares a describe block that runs `body` against a started service and a browser, or skips it
 * (or fails, under REQUIRE_BROWSER=1) without chromium. `extraEnv` is added to the service's.
 */
export function describeConsole(name: string, body: (suite: ConsoleSuite) => void, extraEnv: Record<string, string> = {}): void {
  if (!haveBrowser && !requireBrowser) {
    describe(name, () => {
      describe.skip(`skipped: ${CHROMIUM} is missing (apt-get install chromium; REQUIRE_BROWSER=1 makes this a failure)`, () => {})
    })
    return
  }
  // A browser step waits on a page, a service and a model server sharing two cores with other test files.
  describe(name, { timeout: 90_000 }, () => {
    const suite = {} as ConsoleSuite
    const contexts: BrowserContext[] = []
    let env: Record<string, string> = {}
    let drop: (() => Promise<void>) | undefined
    let port = 0
    let counter = 0
    const start = async () => {
      const started = await startProcess('src/server.ts', { ...env, HOST: '127.0.0.1', PORT: String(port) }, /listening on/)
      const url = `http://127.0.0.1:${port}`
      suite.server = { ...started, url, http: httpClient(url) }
    }

    beforeAll(async () => {
      if (!haveBrowser) throw new Error(`REQUIRE_BROWSER=1 but ${CHROMIUM} is missing (apt-get install chromium)`)
      suite.upstream = await startUpstream()
      const base = await processEnv('aw-console')
      drop = base.drop
      env = {
        ...base.env,
        OPENAI_API_KEY: 'sk-console-test',
        OPENAI_BASE_URL: suite.upstream.url,
        SIGN_IN_MAX_PER_ADDRESS: '100000',
        ...extraEnv,
      }
      port = await freePort()
      await start()
      suite.browser = await chromium.launch({ executablePath: CHROMIUM, args: CHROMIUM_ARGS })
      await mkdir(CONSOLE_ARTIFACTS, { recursive: true })
    }, 120_000)

    afterAll(async () => {
      for (const context of contexts) await context.close().catch(() => {})
      await suite.browser?.close()
      await stopProcess(suite.server)
      await suite.upstream?.close()
      await drop?.()
    })

    suite.newPage = async (viewport = { width: 1280, height: 800 }) => {
      const context = await suite.browser.newContext({ viewport })
      contexts.push(context)
      const page = await context.newPage()
      // A step that has not happened in 20 s will not: fail with the locator's message, not the test's timeout.
      page.setDefaultTimeout(20_000)
      onTestFailed(() => console.error(suite.server.output().slice(-4000)))
      return page
    }
    suite.user = async (name) => {
      counter += 1
      const email = `console${counter}-${Date.now().toString(36)}@example.com`
      const password = 'correct horse battery'
      const displayName = name ?? `Console User ${counter}`
      const res = await suite.server.http('POST', '/api/v1/auth/sign-up', { body: { name: displayName, email, password } })
      if (res.status !== 201) throw new Error(`sign-up answered ${res.status}: ${JSON.stringify(res.body)}`)
      const data = (res.body as { data: { access_token: string; user: { primary_workspace: { uuid: string } } } }).data
      return { name: displayName, email, password, token: data.access_token, workspaceUuid: data.user.primary_workspace.uuid }
    }
    suite.open = async (page, user, target) => {
      await page.goto(`${suite.server.url}/console/sign-in`)
      await page.evaluate((token) => {
        localStorage.setItem('aw.console.token', token)
        localStorage.removeItem('aw.console.workspace')
      }, user.token)
      await page.goto(`${suite.server.url}/console${target}`)
    }
    suite.screenshot = async (page, name) => {
      // The whole page as a window that tall shows it (Playwright's fullPage stitches scrolled views,
      // which draws the fixed header in the middle): grow the window, take it, put it back.
      const viewport = page.viewportSize()!
      const height = await page.evaluate<number>('document.documentElement.scrollHeight')
      if (height > viewport.height) await page.setViewportSize({ width: viewport.width, height: Math.min(height, 6000) })
      await page.screenshot({ path: path.join(CONSOLE_ARTIFACTS, `${name}.png`) })
      if (height > viewport.height) await page.setViewportSize(viewport)
    }
    suite.restart = async () => {
      await stopProcess(suite.server, 'SIGTERM')
      await start()
    }
    body(suite)
  })
}
