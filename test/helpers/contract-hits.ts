/**
 * The operations of the OpenAPI document each test file reached over REST (./contract.ts adds
 * them). A setup file of every test file (vitest.config.ts), so that each one, even one that
 * makes no request, leaves its record when the run collects them (./global-setup.ts).
 */
import { writeFileSync } from 'node:fs'
import path from 'node:path'
import { afterAll, expect } from 'vitest'

/** The environment variable naming the folder of the records, one JSON list per test file. */
export const CONTRACT_HITS_DIR = 'TEST_CONTRACT_HITS_DIR'

/** Operations this test file reached, as `METHOD template`. */
export const hits = new Set<string>()

const dir = process.env[CONTRACT_HITS_DIR]
if (dir) {
  afterAll(() => {
    const file = expect.getState().testPath
    if (file) writeFileSync(path.join(dir, `${path.relative(process.cwd(), file).replaceAll(path.sep, '__')}.json`), JSON.stringify([...hits]))
  })
}
