import { availableParallelism } from 'node:os'
import { defineConfig } from 'vitest/config'
import { NODE_FLAGS } from './src/node-flags.ts'

/**
 * One fresh database per test file: a clone of a migrated template on PostgreSQL when
 * DATABASE_URL is set, an in-memory PGlite otherwise (test/helpers/database.ts).
 */
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['./test/helpers/global-setup.ts'],
    // Each test file records the OpenAPI operations it reached (test/helpers/contract-hits.ts).
    setupFiles: ['./test/helpers/contract-hits.ts'],
    pool: 'forks',
    // Most of a test file's time is spent waiting on sockets, child processes and timers, so at
    // least two files run at once, even on two cores (vitest's default there would be one).
    maxWorkers: Math.max(2, availableParallelism() - 1),
    // The service's own Node flags (src/node-flags.ts): the tests run under what `npm start` runs.
    execArgv: [...NODE_FLAGS],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
})
