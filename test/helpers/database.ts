/**
 * Test databases. PostgreSQL mode (DATABASE_URL set): global-setup migrates a template database
 * once, and each test file clones it (`CREATE DATABASE ... TEMPLATE`), as immich does. PGlite
 * mode: each file gets an in-memory PGlite with the committed migrations applied.
 */
import { randomBytes } from 'node:crypto'
import { migrate, openOrm, type Orm } from '../../src/platform/db.ts'

/** The server's maintenance URL: DATABASE_URL with its database swapped for `postgres`. */
export function adminUrl(databaseUrl: string, database = 'postgres'): string {
  const url = new URL(databaseUrl)
  url.pathname = `/${database}`
  return url.toString()
}

/** Runs statements on the maintenance database. */
export async function adminExecute(databaseUrl: string, statements: string[]): Promise<void> {
  const orm = await openOrm({ kind: 'postgres', url: adminUrl(databaseUrl), poolMax: 1 })
  try {
    for (const sql of statements) await orm.em.fork().execute(sql)
  } finally {
    await orm.close()
  }
}

/** A fresh, migrated database for one test file, and how to drop it. */
export async function freshDatabase(): Promise<{ orm: Orm; url: string | undefined; drop: () => Promise<void> }> {
  const base = process.env.DATABASE_URL
  const template = process.env.TEST_TEMPLATE_DB
  if (!base || !template) {
    const orm = await openOrm({ kind: 'pglite', dir: null })
    await migrate(orm)
    return { orm, url: undefined, drop: async () => {} }
  }
  const name = `aw_test_${randomBytes(6).toString('hex')}`
  await adminExecute(base, [`create database "${name}" template "${template}"`])
  const url = adminUrl(base, name)
  const orm = await openOrm({ kind: 'postgres', url, poolMax: 5 })
  return {
    orm,
    url,
    drop: async () => {
      await orm.close()
      await adminExecute(base, [`drop database if exists "${name}" with (force)`])
    },
  }
}
