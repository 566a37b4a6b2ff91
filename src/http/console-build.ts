/**
 * The web console's build (docs/console.md, "How it is built and served"): the browser app in
 * src/console is built by Vite into dist/console, ahead of serving. `npm start` calls
 * {@link ensureConsoleBuilt} before it listens, so `npm ci && npm start` is enough: the first start
 * builds (a few seconds), later starts find the build current and only hash the sources. A start
 * that builds says so before it does, with how long the last build here took (or a typical time),
 * so a person watching a quiet terminal knows why, and after, how long it took.
 */
import { createHash } from 'node:crypto'
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs'
import { brotliCompressSync, constants, gzipSync } from 'node:zlib'
import path from 'node:path'
import { fileURLToPath } from 'node:url'

/** The project's root: two folders above this file. */
const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..')
/** The console's sources (index.html, vite.config.ts, the React app). */
export const CONSOLE_SOURCE_DIR = path.join(ROOT, 'src/console')
/** Where the built files are served from. */
export const CONSOLE_BUILD_DIR = path.join(ROOT, 'dist/console')
/** Names the sources a build was made from, inside the build. */
const STAMP = '.source-hash'
/** Milliseconds the build took, inside the build: the next build's estimate. */
const DURATION = '.build-ms'
/** What a first build typically takes on a laptop, when no earlier build says. */
const TYPICAL_BUILD_MS = 20_000

/** Where {@link ensureConsoleBuilt} says that it builds and how long it took (the service's logger). */
export interface BuildLog {
  info: (fields: Record<string, unknown>, message: string) => void
}

/** The duration of the build in dist/console, if it recorded one. */
function lastBuildMs(): number | null {
  try {
    const ms = Number(readFileSync(path.join(CONSOLE_BUILD_DIR, DURATION), 'utf8'))
    return Number.isFinite(ms) && ms > 0 ? ms : null
  } catch {
    return null
  }
}

const seconds = (ms: number) => Math.max(1, Math.round(ms / 1000))

/** The SHA-256 of every source file (path and content), of this builder and of the lock file, which pins the libraries bundled. */
export function consoleSourceHash(): string {
  const hash = createHash('sha256')
  const files = readdirSync(CONSOLE_SOURCE_DIR, { recursive: true, encoding: 'utf8' })
    .filter((file) => !file.split(path.sep).includes('node_modules'))
    .sort()
  for (const file of files) {
    const full = path.join(CONSOLE_SOURCE_DIR, file)
    if (!/\.[a-z]+$/i.test(file)) continue
    hash.update(file).update('\0').update(readFileSync(full)).update('\0')
  }
  // How it is built is part of what was built.
  hash.update(readFileSync(fileURLToPath(import.meta.url)))
  const lock = path.join(ROOT, 'package-lock.json')
  if (existsSync(lock)) hash.update(readFileSync(lock))
  return hash.digest('hex')
}

/** True when dist/console holds a build of the current sources. */
export function consoleBuildIsCurrent(sourceHash = consoleSourceHash()): boolean {
  const stamp = path.join(CONSOLE_BUILD_DIR, STAMP)
  return existsSync(stamp) && readFileSync(stamp, 'utf8') === sourceHash
}

/** What {@link ensureConsoleBuilt} did. */
export type ConsoleBuildOutcome = 'current' | 'built' | 'unavailable'

/**
 * Builds the console into dist/console unless that holds a build of the current sources. The
 * build goes to a folder of its own first and is renamed into place, so a process serving the old
 * build, or another process building at the same time, never sees half of one.
 * Answers `unavailable` (and builds nothing) when Vite is not installed (`npm ci --omit=dev`):
 * the service then answers /console with 503 and says why (./console.plugin.ts).
 * @throws when Vite is installed and the build fails (a broken source).
 */
export async function ensureConsoleBuilt(log?: BuildLog): Promise<ConsoleBuildOutcome> {
  const sourceHash = consoleSourceHash()
  if (consoleBuildIsCurrent(sourceHash)) return 'current'
  let vite: typeof import('vite')
  try {
    vite = await import('vite')
  } catch {
    return 'unavailable'
  }
  const staging = `${CONSOLE_BUILD_DIR}.${process.pid}.${Date.now()}`
  const last = lastBuildMs()
  const estimate = last ?? TYPICAL_BUILD_MS
  log?.info(
    { estimated_ms: estimate },
    `building the web console into dist/console (its sources changed since the last build); this takes about ${seconds(estimate)} s${last ? ' (the last build here)' : ''}, once`,
  )
  const startedAt = performance.now()
  // Vite and its React plugin read NODE_ENV themselves (vitest sets `test`): a production build
  // whatever the process runs as, the variable put back afterwards.
  const nodeEnv = process.env.NODE_ENV
  process.env.NODE_ENV = 'production'
  try {
    await vite.build({
      configFile: path.join(CONSOLE_SOURCE_DIR, 'vite.config.ts'),
      logLevel: 'warn',
      mode: 'production',
      build: { outDir: staging, emptyOutDir: true },
    })
    compressAssets(path.join(staging, 'assets'))
    const tookMs = Math.round(performance.now() - startedAt)
    writeFileSync(path.join(staging, DURATION), String(tookMs))
    writeFileSync(path.join(staging, STAMP), sourceHash)
    if (consoleBuildIsCurrent(sourceHash)) return 'current'
    mkdirSync(path.dirname(CONSOLE_BUILD_DIR), { recursive: true })
    rmSync(CONSOLE_BUILD_DIR, { recursive: true, force: true })
    renameSync(staging, CONSOLE_BUILD_DIR)
    log?.info({ duration_ms: tookMs }, `built the web console into dist/console in ${(tookMs / 1000).toFixed(1)} s`)
    return 'built'
  } finally {
    if (nodeEnv === undefined) delete process.env.NODE_ENV
    else process.env.NODE_ENV = nodeEnv
    rmSync(staging, { recursive: true, force: true })
  }
}

/**
 * Writes a Brotli (`.br`) and a gzip (`.gz`) copy beside each script and style sheet, once per
 * build, which the static file server answers to browsers that take them (./console.plugin.ts).
 */
function compressAssets(dir: string): void {
  for (const file of readdirSync(dir)) {
    if (!/\.(js|css|svg|json)$/.test(file)) continue
    const body = readFileSync(path.join(dir, file))
    writeFileSync(path.join(dir, `${file}.br`), brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11 } }))
    writeFileSync(path.join(dir, `${file}.gz`), gzipSync(body, { level: 9 }))
  }
}
