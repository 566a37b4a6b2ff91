/**
 * Vitest global setup: in PostgreSQL mode, one migrated template database for the whole run;
 * its name reaches the test files through TEST_TEMPLATE_DB. In PGlite mode, one migrated data
 * directory saved as a tar file, named by TEST_PGLITE_SNAPSHOT (./database.ts). In every mode, a folder where each
 * test file records the operations of the OpenAPI document it reached over REST
 * (./contract-hits.ts); the web console built (docs/console.md); when every test file ran, the run fails if one operation was reached by
 * none of them (docs/api/conventions.md, "The OpenAPI document").
 */
import { randomBytes } from 'node:crypto'
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import path from 'node:path'
import { ensureConsoleBuilt } from '../../src/http/console-build.ts'
import { openApiDocument } from '../../src/http/openapi-document.ts'
import { migrate, openOrm } from '../../src/platform/db.ts'
import { CONTRACT_HITS_DIR } from './contract-hits.ts'
import { adminExecute, adminUrl, PGLITE_SNAPSHOT, writePgliteSnapshot } from './database.ts'

export default async function setup() {
  const hitsDir = mkdtempSync(path.join(tmpdir(), 'aw-contract-'))
  process.env[CONTRACT_HITS_DIR] = hitsDir
  // Built once here, so the service processes that test files start find it current and never build at once.
  await ensureConsoleBuilt()
  const dropTemplate = await templateDatabase()
  if (!dropTemplate) {
    const snapshot = path.join(hitsDir, '..', `${path.basename(hitsDir)}-pglite.tar`)
    await writePgliteSnapshot(snapshot)
    process.env[PGLITE_SNAPSHOT] = snapshot
  }
  return async () => {
    try {
      checkEveryOperationReached(hitsDir)
    } finally {
      rmSync(hitsDir, { recursive: true, force: true })
      if (process.env[PGLITE_SNAPSHOT]) rmSync(process.env[PGLITE_SNAPSHOT], { force: true })
      await dropTemplate?.()
    }
  }
}

/** The migrated template database of PostgreSQL mode, and how to drop it. */
async function templateDatabase(): Promise<(() => Promise<void>) | undefined> {
  const base = process.env.DATABASE_URL
  if (!base) return undefined
  const name = `aw_template_${randomBytes(6).toString('hex')}`
  await adminExecute(base, [`create database "${name}"`])
  const orm = await openOrm({ kind: 'postgres', url: adminUrl(base, name), poolMax: 1 })
  await migrate(orm)
  await orm.close()
  process.env.TEST_TEMPLATE_DB = name
  return async () => {
    await adminExecute(base, [`drop database if exists "${name}" with (force)`])
  }
}

/** Every `*.test.ts` under `dir`, relative to the working directory, as the records name them. */
function testFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .filter((file) => file.endsWith('.test.ts'))
    .map((file) => path.relative(process.cwd(), path.join(dir, file)).replaceAll(path.sep, '__'))
}

/**
 * When every test file left its record (a run of the whole suite, not of a few files), fails the
 * run naming the operations of the document none of them reached over REST.
 */
function checkEveryOperationReached(hitsDir: string): void {
  const records = new Set(readdirSync(hitsDir).map((file) => file.replace(/\.json$/, '')))
  if (!testFiles(path.join(process.cwd(), 'test')).every((file) => records.has(file))) return
  const reached = new Set<string>()
  for (const record of records) {
    const hits: unknown = JSON.parse(readFileSync(path.join(hitsDir, `${record}.json`), 'utf8'))
    if (Array.isArray(hits)) for (const hit of hits) reached.add(String(hit))
  }
  const doc = openApiDocument('http://127.0.0.1')
  const missing = Object.entries(doc.paths ?? {}).flatMap(([template, item]) =>
    (['get', 'post', 'put', 'patch', 'delete'] as const)
      .filter((method) => item[method])
      .map((method) => `${method.toUpperCase()} ${template}`)
      .filter((operation) => !reached.has(operation)),
  )
  if (missing.length > 0) {
    // Vitest reports an error thrown by a global teardown but still exits 0: set the exit code.
    console.error(`No test reached these operations of the OpenAPI document over REST:\n${missing.join('\n')}`)
    process.exitCode = 1
  }
}
