import { defineConfig } from 'vitest/config'

/**
 * One fresh database per test file: a clone of a migrated template on PostgreSQL when
 * DATABASE_URL is set, an in-memory PGlite otherwise (test/helpers/database.ts).
 */
export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['./test/helpers/global-setup.ts'],
    pool: 'forks',
    testTimeout: 30_000,
    hookTimeout: 120_000,
    reporters: ['default'],
  },
})
