/**
 * `npm run bench:console`: the web console's first screen (docs/console.md, "Speed"), against
 * the service started as `npm start` starts it (production mode, PostgreSQL), in Debian's
 * chromium (playwright-core).
 *
 * - Script: the bytes of the scripts the first screen (sign-in) loads, gzipped (budget 250 KB)
 *   and as served (Brotli).
 * - Time to interactive: from navigation start to the sign-in button on screen with its handler
 *   attached (React has rendered the form), in a new browser context each time (no cache), over
 *   BENCH_CONSOLE_LOADS loads (default 20): median, p90 and the worst (budget 1 s). A second
 *   series opens the agents list signed in (the first screen of a returning user).
 *
 * Results: bench/results/console-<time>.{json,md} and console-latest.
 */
import { chromium, type Browser } from 'playwright-core'
import { envNumber, machineOf, runBench, signUp, startService, writeResults } from './harness.ts'
import { median } from './metrics-support.ts'

const LOADS = envNumber('BENCH_CONSOLE_LOADS', 20)
const CHROMIUM_ARGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync']

/** The p-th percentile (0..1) of `values` by nearest rank. */
const percentile = (values: number[], p: number) => [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.ceil(p * values.length) - 1)]

/** Loads `path` in a fresh context `LOADS` times; answers each time to interactive (ms) and the scripts of the last load. */
async function loads(browser: Browser, url: string, path: string, ready: string, token?: string): Promise<{ times: number[]; scripts: string[] }> {
  const times: number[] = []
  let scripts: string[] = []
  for (let i = 0; i < LOADS; i += 1) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    if (token) await context.addInitScript(`localStorage.setItem('aw.console.token', ${JSON.stringify(token)})`)
    const page = await context.newPage()
    const seen: string[] = []
    page.on('request', (request) => {
      const pathname = new URL(request.url()).pathname
      if (pathname.startsWith('/console/assets/') && pathname.endsWith('.js')) seen.push(pathname)
    })
    await page.goto(`${url}/console${path}`, { waitUntil: 'commit' })
    await page.getByRole(ready === 'Sign in' ? 'button' : 'heading', { name: ready }).waitFor({ timeout: 30_000 })
    times.push(await page.evaluate<number>('performance.now()'))
    scripts = seen
    await context.close()
  }
  return { times, scripts }
}

/** Sums the compressed sizes of `scripts` as the service answers them for `encoding`. */
async function bytes(url: string, scripts: string[], encoding: string): Promise<number> {
  let total = 0
  for (const script of scripts) {
    const response = await fetch(`${url}${script}`, { headers: { 'accept-encoding': encoding } })
    // fetch decodes the body: the length on the wire is the header's (the files are served whole, precompressed).
    total += Number(response.headers.get('content-length'))
    await response.body?.cancel()
  }
  return total
}

await runBench('aw_bench_console', async (bench) => {
  const service = await startService(bench)
  const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: CHROMIUM_ARGS })
  bench.closers.push(() => browser.close())
  const { token } = await signUp(service.url, 'Bench Console', `bench-console-${Date.now()}@example.com`)
  const signIn = await loads(browser, service.url, '/sign-in', 'Sign in')
  const agents = await loads(browser, service.url, '/agents', 'Agents', token)
  const gzip = await bytes(service.url, signIn.scripts, 'gzip')
  const brotli = await bytes(service.url, signIn.scripts, 'br')
  const summary = (times: number[]) => ({ median: median(times), p90: percentile(times, 0.9), worst: Math.max(...times) })
  const result = {
    date: new Date().toISOString(),
    machine: machineOf(bench.postgres).json,
    loads: LOADS,
    firstScreen: { scripts: signIn.scripts, gzipBytes: gzip, brotliBytes: brotli, ...summary(signIn.times) },
    agentsSignedIn: { scripts: agents.scripts, ...summary(agents.times) },
  }
  const f = (ms: number) => `${ms.toFixed(0)} ms`
  const md = [
    `# Web console: first screen (${result.date.slice(0, 10)})`,
    '',
    `${machineOf(bench.postgres).line}; chromium headless, a new context per load, ${LOADS} loads.`,
    '',
    '| screen | scripts | gzip | as served (br) | median | p90 | worst |',
    '|---|---|---|---|---|---|---|',
    `| sign-in (first screen) | ${signIn.scripts.length} | ${(gzip / 1024).toFixed(1)} KB | ${(brotli / 1024).toFixed(1)} KB | ${f(result.firstScreen.median)} | ${f(result.firstScreen.p90)} | ${f(result.firstScreen.worst)} |`,
    `| agents, signed in | ${agents.scripts.length} | | | ${f(result.agentsSignedIn.median)} | ${f(result.agentsSignedIn.p90)} | ${f(result.agentsSignedIn.worst)} |`,
    '',
  ].join('\n')
  console.log(md)
  writeResults([`console-${result.date.replace(/[:.]/g, '-')}`, 'console-latest'], result, md)
})
