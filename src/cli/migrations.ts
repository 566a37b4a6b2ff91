/**
 * `npm run migration:create` / `npm run migration:up`.
 *
 * `create` diffs the entities against an in-memory PGlite database holding every committed
 * migration and writes the difference as a new migration under src/migrations (add it to
 * src/migrations/index.ts). `up` applies pending migrations to the configured database.
 */
import { loadConfig, loadDotEnv } from '../platform/config.ts'
import { migrate, openOrm, targetFromConfig } from '../platform/db.ts'

const command = process.argv[2]
if (command === 'create') {
  const orm = await openOrm({ kind: 'pglite', dir: null })
  await migrate(orm)
  const result = await orm.migrator.create('src/migrations', false, false, process.argv[3])
  console.log(result.fileName ? `wrote src/migrations/${result.fileName}` : 'no changes')
  await orm.close()
} else if (command === 'up') {
  loadDotEnv()
  const orm = await openOrm(targetFromConfig(loadConfig()))
  console.log((await migrate(orm)).join('\n') || 'nothing to apply')
  await orm.close()
} else {
  console.error('usage: migrations.ts create [name] | up')
  process.exitCode = 2
}
