/**
 * The walkthroughs of docs/walkthroughs/ (and the short one in README.md) run as written.
 *
 * One real server, started as `npm start` starts it (src/server.ts under tsx, embedded PGlite in
 * a fresh DATA_DIR, no provider keys), serves every page; a page that names `BASE_2` (an import
 * into a second, fresh service) gets a second such server, started for it alone, and a page that
 * names `IDP_PORT` (single sign-on through a provider the page starts) is served by a server of its
 * own started with that provider's settings. For each page, its ```sh blocks are
 * joined in order and run with `bash -euo pipefail`, BASE pointing at the server. The page must
 * exit 0, and its output must be exactly its `# -> ` expectation lines: the n-th non-empty output
 * line matches the n-th expectation (`<...>` in an expectation stands for any text; the default
 * address http://127.0.0.1:3000 for the server's own). The servers allow loopback webhook
 * endpoints (a page's receiver listens there); a page's scripts find the service's packages
 * through NODE_PATH, and whatever a page starts in the background ends with it.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { NODE_FLAGS } from '../src/node-flags.ts'
import { freePort } from './helpers/ports.ts'

const ROOT = path.resolve(import.meta.dirname, '..')
const PAGES_DIR = path.join(ROOT, 'docs', 'walkthroughs')
const DEFAULT_BASE = 'http://127.0.0.1:3000'

/** The ```sh blocks of a Markdown text, in order. */
export function shellBlocks(markdown: string): string[] {
  return [...markdown.matchAll(/^```sh\n([\s\S]*?)^```$/gm)].map((match) => match[1])
}

/** The expectation lines (`# -> text`) of a script, without the marker, trimmed. */
export function expectations(script: string): string[] {
  return script
    .split('\n')
    .map((line) => /^\s*# -> (.*)$/.exec(line)?.[1]?.trim())
    .filter((text): text is string => text !== undefined && text !== '')
}

const escapeRegExp = (text: string): string => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** A matcher for one expectation line: `<...>` is any text, the default base is the server's. */
function lineMatcher(expected: string, base: string): RegExp {
  const parts = expected.replaceAll(DEFAULT_BASE, base).split(/<[^<>]+>/)
  return new RegExp(`^${parts.map(escapeRegExp).join('.*')}$`)
}

/**
 * Compares the output with the expectations line by line: every non-empty output line must match
 * the expectation at its position, and there must be as many of each.
 * @returns null when they agree, else a description of the first difference.
 */
export function firstMismatch(expected: string[], output: string, base: string): string | null {
  const lines = output
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '')
  for (let index = 0; index < Math.max(expected.length, lines.length); index += 1) {
    const want = expected[index]
    const got = lines[index]
    if (want === undefined) return `output line ${index + 1} has no # -> line: ${got}`
    if (got === undefined) return `# -> ${want}: the output ended before it`
    if (!lineMatcher(want, base).test(got)) return `# -> ${want}: the output says ${got}`
  }
  return null
}

interface ScriptResult {
  code: number | null
  stdout: string
  stderr: string
}

/**
 * Runs a script with `bash -euo pipefail` in a scratch folder; kills it, with whatever it started
 * in the background (its process group), after `timeoutMs`.
 */
function runScript(script: string, base: string, timeoutMs: number, extraEnv: Record<string, string> = {}): Promise<ScriptResult> {
  const dir = mkdtempSync(path.join(tmpdir(), 'aw-walkthrough-'))
  const file = path.join(dir, 'walkthrough.sh')
  writeFileSync(file, script)
  return new Promise((resolve) => {
    // `node` in the scripts is the Node that runs the tests; `require` finds the service's
    // packages (a page run from the service's folder finds them there).
    const env = {
      ...process.env,
      BASE: base,
      SERVICE_DIR: ROOT,
      ...extraEnv,
      PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env.PATH ?? ''}`,
      NODE_PATH: path.join(ROOT, 'node_modules'),
    }
    const child = spawn('bash', ['-euo', 'pipefail', file], { cwd: dir, env, stdio: ['ignore', 'pipe', 'pipe'], detached: true })
    let stdout = ''
    let stderr = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    // The script leads a process group of its own: the negative pid kills the whole group.
    const timer = setTimeout(() => {
      if (child.pid === undefined) return
      try {
        process.kill(-child.pid, 'SIGKILL')
      } catch {
        // The group has ended meanwhile.
      }
    }, timeoutMs)
    child.once('close', (code) => {
      clearTimeout(timer)
      // Whatever the page left running in the background (a receiver, a provider) ends with it.
      try {
        if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL')
      } catch {
        // Nothing of the group is left.
      }
      rmSync(dir, { recursive: true, force: true })
      resolve({ code, stdout, stderr })
    })
  })
}

/** Variables that would send the server elsewhere than a fresh embedded database with no keys. */
const CLEARED = [
  'DATABASE_URL',
  'REDIS_URL',
  'APP_KEY',
  'APP_PREVIOUS_KEYS',
  'APP_URL',
  'SERVICE_KEYS',
  'OPENAI_API_KEY',
  'OPENAI_BASE_URL',
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_BASE_URL',
  'OPENAI_COMPATIBLE_BASE_URL',
  'OPENAI_COMPATIBLE_API_KEY',
  'DEFAULT_MODEL',
  'WORKER',
  'SIGN_UP_ENABLED',
  'OIDC_ISSUER',
  'OIDC_CLIENT_ID',
  'OIDC_CLIENT_SECRET',
  'PASSWORD_SIGN_IN',
]

/** A server started as `npm start` starts it, on a fresh embedded database. */
interface StartedServer {
  base: string
  close(): Promise<void>
}

/**
 * Starts src/server.ts as `npm start` does, in its own DATA_DIR, and waits until it is ready.
 * @param extraEnv settings over the defaults (the single sign-on page's provider).
 */
async function startServer(extraEnv: Record<string, string> = {}): Promise<StartedServer> {
  const dataDir = mkdtempSync(path.join(tmpdir(), 'aw-docs-'))
  const port = await freePort()
  const base = `http://127.0.0.1:${port}`
  // Cleared variables are set empty rather than removed: the configuration reads an empty value
  // as unset, and a `.env` file in the working folder cannot fill them in.
  // Loopback webhook endpoints are allowed: the webhooks walkthrough's receiver listens there.
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATA_DIR: dataDir,
    PORT: String(port),
    HOST: '127.0.0.1',
    LOG_LEVEL: 'warn',
    WEBHOOK_ALLOW_PRIVATE_NETWORK: 'true',
  }
  for (const name of CLEARED) env[name] = ''
  Object.assign(env, extraEnv)
  const child: ChildProcess = spawn(process.execPath, [...NODE_FLAGS, '--import', 'tsx', 'src/server.ts'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  })
  const exited = new Promise((resolve) => child.once('exit', resolve))
  let output = ''
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()))
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()))
  const close = async () => {
    child.kill('SIGTERM')
    await exited
    rmSync(dataDir, { recursive: true, force: true })
  }
  let ready = false
  for (let attempt = 0; attempt < 600 && !ready && child.exitCode === null; attempt++) {
    ready = await fetch(`${base}/ready`).then(
      (response) => response.ok,
      () => false,
    )
    if (!ready) await new Promise((resolve) => setTimeout(resolve, 100))
  }
  if (!ready) {
    await close()
    throw new Error(`the server did not start:\n${output.slice(-2000)}`)
  }
  return { base, close }
}

/**
 * A service started with single sign-on through a provider the page itself starts, on a free port
 * (the service reads the provider's metadata on the first sign-in, not at start-up).
 */
async function singleSignOnServer(): Promise<{ server: StartedServer; env: Record<string, string> }> {
  const idpPort = await freePort()
  const secret = `walkthrough-${Math.random().toString(36).slice(2)}`
  const settings = { OIDC_CLIENT_ID: 'walkthrough', OIDC_CLIENT_SECRET: secret }
  const server = await startServer({
    ...settings,
    OIDC_ISSUER: `http://127.0.0.1:${idpPort}`,
    OIDC_ALLOW_HTTP: 'true',
    OIDC_NAME: 'Dev login',
  })
  return { server, env: { ...settings, IDP_PORT: String(idpPort) } }
}

describe('docs walkthroughs run as written against `npm start`', () => {
  let server: StartedServer | undefined
  let base = ''

  beforeAll(async () => {
    server = await startServer()
    base = server.base
  }, 90_000)

  afterAll(async () => server?.close())

  const pages = readdirSync(PAGES_DIR)
    .filter((name) => name.endsWith('.md'))
    .sort()
    .map((name) => ({ name: `docs/walkthroughs/${name}`, blocks: shellBlocks(readFileSync(path.join(PAGES_DIR, name), 'utf8')) }))
  // README.md: its walkthrough blocks (the ones that call the API), not `npm ci && npm start`.
  const readme = shellBlocks(readFileSync(path.join(ROOT, 'README.md'), 'utf8')).filter((block) => block.includes('$API'))
  pages.push({ name: 'README.md', blocks: readme })

  it('finds the fourteen walkthroughs and the README walkthrough', () => {
    expect(pages.map((page) => page.name)).toEqual([
      'docs/walkthroughs/accounts-and-workspaces.md',
      'docs/walkthroughs/agent-versions.md',
      'docs/walkthroughs/agents-and-prompts.md',
      'docs/walkthroughs/audit-log.md',
      'docs/walkthroughs/command-room.md',
      'docs/walkthroughs/evaluations.md',
      'docs/walkthroughs/knowledge.md',
      'docs/walkthroughs/metrics.md',
      'docs/walkthroughs/running-assistants.md',
      'docs/walkthroughs/runs-that-wait.md',
      'docs/walkthroughs/single-sign-on.md',
      'docs/walkthroughs/usage-and-budgets.md',
      'docs/walkthroughs/webhooks.md',
      'docs/walkthroughs/workflows.md',
      'README.md',
    ])
    for (const page of pages) expect(page.blocks.length, page.name).toBeGreaterThan(0)
  })

  for (const page of pages) {
    it(`${page.name}: every sh block runs, and the output matches its # -> lines`, async () => {
      const script = page.blocks.join('\n')
      const expected = expectations(script)
      expect(expected.length, `${page.name} has no # -> lines`).toBeGreaterThan(0)
      // The second service lives only as long as the page that imports into it. A page that starts
      // an identity provider (it names IDP_PORT) gets a service of its own that knows the provider.
      const second = script.includes('BASE_2') ? await startServer() : undefined
      const idp = script.includes('IDP_PORT') ? await singleSignOnServer() : undefined
      const pageBase = idp?.server.base ?? base
      let result: ScriptResult
      try {
        result = await runScript(script, pageBase, 55_000, {
          ...(second ? { BASE_2: second.base } : {}),
          ...(idp ? idp.env : {}),
        })
      } finally {
        await second?.close()
        await idp?.server.close()
      }
      const report = `exit ${result.code}\n--- stdout\n${result.stdout.slice(-3000)}\n--- stderr\n${result.stderr.slice(-3000)}`
      expect(result.code, report).toBe(0)
      expect(firstMismatch(expected, result.stdout, pageBase), report).toBeNull()
    }, 120_000)
  }
})

describe('walkthrough test helpers', () => {
  it('match the output line by line, with <...> as any text and the default base as the server', () => {
    const output = 'Ada\n\n  key: 01ab.png\nhttp://127.0.0.1:4321/x\n'
    expect(firstMismatch(['Ada', 'key: <key>.png', 'http://127.0.0.1:3000/x'], output, 'http://127.0.0.1:4321')).toBeNull()
    expect(firstMismatch(['Ada', 'key: <key>.jpg', 'http://127.0.0.1:3000/x'], output, 'http://127.0.0.1:4321')).toMatch(/key: <key>.jpg/)
    expect(firstMismatch(['Ada', 'key: <key>.png'], output, 'http://127.0.0.1:4321')).toMatch(/has no # -> line/)
    expect(firstMismatch(['Ada', 'key: <key>.png', 'http://127.0.0.1:3000/x', '204'], output, 'http://127.0.0.1:4321')).toMatch(
      /ended before/,
    )
  })

  it('read ```sh blocks only', () => {
    const markdown = '```sh\necho one\n```\n\n```text\nnot run\n```\n```sh\necho two # -> two\n```\n'
    expect(shellBlocks(markdown)).toEqual(['echo one\n', 'echo two # -> two\n'])
    expect(expectations('echo a\n# -> a\n#   ->  not this\n  # -> b  \n')).toEqual(['a', 'b'])
  })
})
