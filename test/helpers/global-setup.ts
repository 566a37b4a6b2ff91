/**
 * Vitest global setup: in PostgreSQL mode, one migrated template database for the whole run;
 * its name reaches the test files through TEST_TEMPLATE_DB.
 */
import { randomBytes } from 'node:crypto'
import { migrate, openOrm } from '../../src/platform/db.ts'
import { adminExecute, adminUrl } from './database.ts'

export default async function setup() {
  const base = process.env.DATABASE_URL
  if (!base) return
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
