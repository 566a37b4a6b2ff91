/**
 * Test databases. PostgreSQL mode (DATABASE_URL set): global-setup migrates a template database
 * once, and each test file clones it (`CREATE DATABASE ... TEMPLATE`), as immich does. PGlite
 * mode: global-setup migrates one in-memory PGlite and saves its data directory as a tar file;
 * each file gets an in-memory PGlite loaded from it (about 1 s, against 6 s for the migrations).
 */
import { randomBytes, randomInt } from 'node:crypto'
import { readFileSync, writeFileSync } from 'node:fs'
import { MikroORM } from '@mikro-orm/core'
import type { PGlite } from '@electric-sql/pglite'
import { migrate, openOrm, ormOptions, type Orm } from '../../src/platform/db.ts'

/** The environment variable naming the migrated PGlite data directory's tar file (global-setup). */
export const PGLITE_SNAPSHOT = 'TEST_PGLITE_SNAPSHOT'

/** Migrates an in-memory PGlite and writes its data directory, uncompressed, to `file`. */
export async function writePgliteSnapshot(file: string): Promise<void> {
  const orm = await openOrm({ kind: 'pglite', dir: null })
  try {
    await migrate(orm)
    const pglite = (await (orm.em.getConnection() as unknown as { getNativeClient(): Promise<PGlite> }).getNativeClient())
    writeFileSync(file, Buffer.from(await (await pglite.dumpDataDir('none')).arrayBuffer()))
  } finally {
    await orm.close()
  }
}

/** An in-memory PGlite loaded from the snapshot's tar file; migrated anew when there is none. */
async function pgliteDatabase(): Promise<Orm> {
  const snapshot = process.env[PGLITE_SNAPSHOT]
  if (!snapshot) {
    const orm = await openOrm({ kind: 'pglite', dir: null })
    await migrate(orm)
    return orm
  }
  const tar = readFileSync(snapshot)
  const options = ormOptions({ kind: 'pglite', dir: null })
  // A Blob-like object rather than a Blob: MikroORM copies driverOptions, which a Blob does not survive.
  const loadDataDir = { type: 'application/x-tar', arrayBuffer: async () => tar.buffer.slice(tar.byteOffset, tar.byteOffset + tar.byteLength) }
  return MikroORM.init({ ...options, driverOptions: { ...options.driverOptions, loadDataDir } } as typeof options)
}

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
  if (!base || !template) return { orm: await pgliteDatabase(), url: undefined, drop: async () => {} }
  const name = `aw_test_${randomBytes(6).toString('hex')}`
  await adminExecute(base, [`create database "${name}" template "${template}"`])
  const url = adminUrl(base, name)
  const orm = await openOrm({ kind: 'postgres', url, poolMax: 5 })
  // Runs are announced on Redis by id (src/runs/run-bus.ts: a channel per run, one cancel channel),
  // and two test files run at once on the one Redis of the suite: each database starts its run
  // ids at a random point, so one file's run 7 is never another file's, and no cancel or event of
  // one reaches the other's runs.
  await orm.em.fork().execute(`select setval('runs_id_seq', ?)`, [1_000_000 + randomInt(2_000_000_000 - 1_000_000)])
  return {
    orm,
    url,
    drop: async () => {
      await orm.close()
      await adminExecute(base, [`drop database if exists "${name}" with (force)`])
    },
  }
}
