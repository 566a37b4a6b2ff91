/**
 * Database bootstrap for both storage modes (docs/api/conventions.md, "Storage").
 *
 * `DATABASE_URL` set: `@mikro-orm/postgresql` (distributed mode). Unset: `@mikro-orm/pglite`
 * persisted in `DATA_DIR/pglite` (embedded mode), or in memory when `dbName` is `:memory:`
 * (tests). Both use the same entities, the same committed migrations and the same SQL.
 */
import { hash } from 'node:crypto'
import path from 'node:path'
import { Migrator } from '@mikro-orm/migrations'
import pRetry from 'p-retry'
import { vector } from '@electric-sql/pglite-pgvector'
import { PgliteDriver } from '@mikro-orm/pglite'
import { PostgreSqlConnection, PostgreSqlDriver } from '@mikro-orm/postgresql'
import { type AbstractSqlDriver, type EntityManager, type InferKyselyDB, MikroORM, defineConfig } from '@mikro-orm/sql'
import { entities, type EntityDefinition } from '../../entities/index.ts'
import { migrationsList } from '../migrations/index.ts'
import { DATABASE_CONNECT_TIMEOUT_MS, DATABASE_STATEMENT_TIMEOUT_MS } from './config.ts'
import { databaseUnavailable } from './errors.ts'

/** The SQL EntityManager both drivers hand out. */
export type Em = EntityManager

/**
 * The tables and columns of the entities as Kysely sees them (table and column names as stored,
 * `created_at`, `workspace_id`), so that a query naming a column the entities do not have fails
 * the type check (docs/architecture.md, "Queries").
 */
export type Database = InferKyselyDB<EntityDefinition>

/**
 * MikroORM's Kysely query builder typed by {@link Database}, on `em`'s connection (inside its
 * transaction when `em` is in one). Values are converted as the entities declare them, both
 * ways (`convertValues`): a `bigint('number')` column reads as a number and a datetime as a
 * `Date` on PostgreSQL and PGlite alike, as long as the result key is the column's name
 * (`created_at`), the property's (`createdAt`) or `<table alias>_<column>` (`m_created_at`); under
 * any other alias the driver's value comes back (a bigint as a string on PostgreSQL) while the
 * type still says `number` or `Date`. Aggregates are the driver's too (PostgreSQL answers
 * `count(*)` as a string): read them through `Number()`.
 */
export const queries = (em: Em) => em.getKysely<Database>({ convertValues: true })

/**
 * Where the database lives. PostgreSQL's deadlines (docs/operations.md, "Database deadlines"), in
 * milliseconds: `connectTimeoutMs` to open a connection or get a free one from the pool (default
 * {@link DATABASE_CONNECT_TIMEOUT_MS}), `statementTimeoutMs` for one statement (default
 * {@link DATABASE_STATEMENT_TIMEOUT_MS}; 0 for none).
 */
export type DatabaseTarget =
  | { kind: 'postgres'; url: string; poolMax?: number; connectTimeoutMs?: number; statementTimeoutMs?: number }
  | { kind: 'pglite'; dir: string | null }

/**
 * Milliseconds a pooled PostgreSQL connection stays silent before TCP keepalive probes start, so
 * a connection whose server host or network is gone is noticed (and dropped by the pool); `pg`'s
 * default of 0 would leave it to the system's (two hours).
 */
export const KEEPALIVE_INITIAL_DELAY_MS = 10_000

/**
 * The `pg` Pool options of a PostgreSQL target besides the URL and the pool size (MikroORM hands
 * them to `new Pool()` as overrides): the connect deadline (which also bounds the wait for a free
 * pooled connection: pg-pool fails it with "timeout exceeded when trying to connect"), TCP
 * keepalive, and the statement deadline, sent as a startup parameter so the server enforces it
 * on every statement of the connection, prepared ones included. `onPoolCreated` is MikroORM's
 * hook (PostgreSqlConnection.createKyselyDialect calls it with the pool before any connection is
 * made): see {@link releaseEndedConnections}.
 */
export function pgPoolOptions(target: Extract<DatabaseTarget, { kind: 'postgres' }>) {
  const statementTimeout = target.statementTimeoutMs ?? DATABASE_STATEMENT_TIMEOUT_MS
  return {
    connectionTimeoutMillis: target.connectTimeoutMs ?? DATABASE_CONNECT_TIMEOUT_MS,
    keepAlive: true,
    keepAliveInitialDelayMillis: KEEPALIVE_INITIAL_DELAY_MS,
    ...(statementTimeout > 0 ? { statement_timeout: statementTimeout } : {}),
    onPoolCreated: releaseEndedConnections,
  }
}

/** A pooled `pg` client as {@link releaseEndedConnections} sees it. */
interface PooledClient {
  on(event: 'end', listener: () => void): unknown
  release?: (error?: Error) => void
}

/**
 * Gives a pooled connection back to `pool`, which drops it, as soon as the connection ends while
 * it is checked out (the server ended it, or the network did), and makes giving it back twice
 * harmless.
 *
 * Why: Kysely, which MikroORM runs every statement through, never gives back the connection of a
 * transaction whose BEGIN, COMMIT or ROLLBACK fails (its ControlledTransaction releases it only
 * after they succeed). A connection that ends in the middle of a transaction fails both the
 * statement and the ROLLBACK that follows, so it stayed checked out for good: once
 * `DATABASE_POOL_MAX` of them had, every request waited out the connect deadline and answered 503
 * until the process restarted (test/faults-postgres.test.ts found it). pg-pool assigns a
 * client's `release` at every checkout; the accessor below wraps each one so that a second call
 * (Kysely's, after this one) does nothing instead of throwing.
 */
function releaseEndedConnections(pool: { on(event: 'connect', listener: (client: PooledClient) => void): unknown }): void {
  pool.on('connect', (client) => {
    let release: ((error?: Error) => void) | undefined
    let released = true
    Object.defineProperty(client, 'release', {
      configurable: true,
      get: () => release,
      set: (poolRelease: (error?: Error) => void) => {
        released = false
        release = (error) => {
          if (released) return
          released = true
          poolRelease(error)
        }
      },
    })
    client.on('end', () => release?.(new Error('The connection ended while checked out')))
  })
}

const shared = {
  entities,
  extensions: [Migrator],
  migrations: { migrationsList, snapshot: false, transactional: true, allOrNothing: true, silent: true },
  forceUtcTimezone: true,
  // Entities are plain objects from defineEntity; discovery needs no reflection.
  discovery: { warnWhenNoEntities: true },
  debug: false,
}

/** MikroORM options for a target, without connecting (also used by mikro-orm.config.ts). */
export function ormOptions(target: DatabaseTarget) {
  return target.kind === 'postgres'
    ? defineConfig<AbstractSqlDriver>({
        ...shared,
        driver: PostgreSqlDriver,
        clientUrl: target.url,
        pool: { max: target.poolMax ?? 10 },
        driverOptions: pgPoolOptions(target),
      })
    : // pgvector, loaded into PGlite for knowledge embeddings (src/knowledge/vector-store.ts).
      defineConfig<AbstractSqlDriver>({ ...shared, driver: PgliteDriver, dbName: target.dir ?? 'memory://', driverOptions: { extensions: { vector } } })
}

/** The target a configuration names: PostgreSQL when DATABASE_URL is set, else PGlite in DATA_DIR. */
export function targetFromConfig(config: {
  databaseUrl?: string
  dataDir: string
  databasePoolMax?: number
  databaseConnectTimeoutMs?: number
  databaseStatementTimeoutMs?: number
}): DatabaseTarget {
  return config.databaseUrl
    ? {
        kind: 'postgres',
        url: config.databaseUrl,
        poolMax: config.databasePoolMax,
        connectTimeoutMs: config.databaseConnectTimeoutMs,
        statementTimeoutMs: config.databaseStatementTimeoutMs,
      }
    : { kind: 'pglite', dir: path.join(config.dataDir, 'pglite') }
}

/** Connects to the target. Does not migrate: call {@link migrate}. */
export async function openOrm(target: DatabaseTarget): Promise<Orm> {
  return MikroORM.init(ormOptions(target))
}

/** The ORM of either mode; both drivers are SQL drivers with PostgreSQL semantics. */
export type Orm = MikroORM

/**
 * Applies every pending committed migration, all in one transaction; returns the names applied.
 * On PostgreSQL that transaction has no statement deadline (`set local statement_timeout = 0`):
 * the pool's deadline is for requests, and a migration may rewrite a large table.
 * @throws the database's error when a migration fails (none is applied then).
 */
export async function migrate(orm: Orm): Promise<string[]> {
  const connection = orm.em.getConnection()
  if (!(connection instanceof PostgreSqlConnection)) return (await orm.migrator.up()).map((migration) => migration.name)
  // getPending creates the migrations table and reads it on a connection of its own, before the
  // transaction holds one (a pool of one connection would wait for itself otherwise).
  if ((await orm.migrator.getPending()).length === 0) return []
  const applied = await connection.transactional(async (trx) => {
    await connection.execute('set local statement_timeout = 0', [], 'run', trx)
    return orm.migrator.up({ transaction: trx })
  })
  return applied.map((migration) => migration.name)
}

/**
 * How long {@link retryOnConnectionLoss} keeps trying, in milliseconds: long enough to ride out a
 * failover or a pooler restart (connections ended every second or two for a minute still let
 * most attempts through), short enough that work whose database is gone for good ends with its
 * error rather than hanging (docs/operations.md, "Database deadlines").
 */
export const DATABASE_RETRY_MS = 15_000

/**
 * Runs `work`, and again after a pause (100 ms, doubling up to 2 s, randomised; `p-retry`) as long
 * as it fails because the database connection was lost or could not be had (`databaseUnavailable`
 * of src/platform/errors.ts) and less than `forMs` milliseconds have passed: a statement whose
 * connection PostgreSQL ended runs on a new one. Only for work that may run twice: a read, or a
 * write whose own condition makes a second run change nothing (it cannot know whether the first
 * one committed); a write that must not run twice goes through {@link writeOnce}. Background work
 * that nobody retries otherwise uses it (a run's event log and settle, a workflow execution's end,
 * a firing's claim and outcome, a node's static data); requests answer 503 instead and leave
 * retrying to their client.
 * @throws the last error, once it is not a lost connection or `forMs` has passed.
 */
export function retryOnConnectionLoss<T>(work: () => Promise<T>, forMs = DATABASE_RETRY_MS): Promise<T> {
  return pRetry(work, {
    retries: Number.POSITIVE_INFINITY,
    minTimeout: 100,
    maxTimeout: 2_000,
    randomize: true,
    maxRetryTime: forMs,
    shouldRetry: ({ error }) => databaseUnavailable(error) !== undefined,
  })
}

/**
 * A write that must happen once, though a lost connection cannot tell whether it committed (the
 * commit may have landed just before the server ended the connection). Runs `write`; after a
 * failure for a lost connection it asks `stored()` (a read by the keys the write chose itself, a
 * uuid) and answers what that found, else runs `write` again, as {@link retryOnConnectionLoss}
 * does. So the caller either gets what was stored, once, or the error with nothing stored.
 * @param stored what the write stored, read back; undefined when it did not commit.
 * @throws as {@link retryOnConnectionLoss}.
 */
export async function writeOnce<T>(write: () => Promise<T>, stored: () => Promise<T | undefined>, forMs = DATABASE_RETRY_MS): Promise<T> {
  let lost = false
  try {
    return await retryOnConnectionLoss(async () => {
      if (lost) {
        const found = await stored()
        if (found !== undefined) return found
      }
      try {
        return await write()
      } catch (error) {
        if (databaseUnavailable(error)) lost = true
        throw error
      }
    }, forMs)
  } catch (error) {
    // The last try lost its connection too: one more look, so a write that did commit is not answered as failed.
    if (!lost || !databaseUnavailable(error)) throw error
    const found = await stored().catch(() => undefined)
    if (found !== undefined) return found
    throw error
  }
}

/** The part of `pg`'s Pool that {@link prepared} and {@link executeParameterised} use. */
interface PgPool {
  query(config: { name?: string; text: string; values: unknown[] }): Promise<{ rows: Record<string, unknown>[] }>
}

const pools = new WeakMap<Orm, Promise<PgPool | null>>()

/** The ORM's own `pg` pool on PostgreSQL (same connections, same type parsers); null on PGlite. */
function pgPool(orm: Orm): Promise<PgPool | null> {
  let pool = pools.get(orm)
  if (!pool) {
    const connection = orm.em.getConnection()
    pool = connection instanceof PostgreSqlConnection ? (connection.getNativeClient() as Promise<PgPool>) : Promise.resolve(null)
    pools.set(orm, pool)
  }
  return pool
}

/**
 * A hot read-only statement (`?` placeholders, no other `?` in the text) run as a named prepared
 * statement on PostgreSQL: parsed and planned once per pooled connection rather than per call
 * (`em.execute` inlines the parameters into the SQL text, so PostgreSQL parses and plans every
 * call anew). On PGlite it runs through `em()` as usual. It runs outside any transaction of the
 * request's EntityManager: use it for single-statement reads.
 */
export function prepared(name: string, sql: string) {
  const text = numberPlaceholders(sql)
  return async (orm: Orm, em: () => Em, params: unknown[]): Promise<Record<string, unknown>[]> => {
    const pool = await pgPool(orm)
    return pool ? (await pool.query({ name, text, values: params })).rows : em().execute(sql, params)
  }
}

/**
 * Most distinct statements {@link executePrepared} prepares per process (each pooled PostgreSQL
 * connection keeps a plan of each, so this bounds their memory); further texts run unprepared.
 */
const MAX_PREPARED = 256
const preparedByKey = new Map<string, ReturnType<typeof prepared>>()

/**
 * {@link prepared} for statements whose text the caller builds (a bounded set of shapes: the
 * table, the viewer's role, the relations asked for): each distinct text is prepared once per
 * process under a name derived from it. `key` identifies the text (the text itself, or a shorter
 * key that fixes it), and `sql` may build the text only when the key is new. Past
 * {@link MAX_PREPARED} texts, new ones run through `em()` unprepared. Like {@link prepared}, it
 * runs outside any transaction of the request's EntityManager.
 */
export async function executePrepared(
  orm: Orm,
  em: () => Em,
  key: string,
  sql: string | (() => string),
  params: unknown[],
): Promise<Record<string, unknown>[]> {
  let run = preparedByKey.get(key)
  if (!run) {
    const text = typeof sql === 'string' ? sql : sql()
    if (preparedByKey.size >= MAX_PREPARED) return em().execute(text, params)
    run = prepared(`q_${hash('sha1', text, 'hex').slice(0, 24)}`, text)
    preparedByKey.set(key, run)
  }
  return run(orm, em, params)
}

/** `sql` with its `?` placeholders numbered `$1, $2, ...` (`pg` takes only numbered ones). */
function numberPlaceholders(sql: string): string {
  let index = 0
  return sql.replace(/\?/g, () => `$${++index}`)
}

/** {@link numberPlaceholders} by statement text (callers build a bounded set of texts). */
const numberedTexts = new Map<string, string>()
const NUMBERED_TEXTS_MAX = 2000

function numbered(sql: string): string {
  let text = numberedTexts.get(sql)
  if (text === undefined) {
    text = numberPlaceholders(sql)
    if (numberedTexts.size >= NUMBERED_TEXTS_MAX) numberedTexts.clear()
    numberedTexts.set(sql, text)
  }
  return text
}

/**
 * A read-only statement (`?` placeholders, no other `?` in the text) run on PostgreSQL with real
 * `$n` parameters through the ORM's `pg` pool: PostgreSQL receives the values as bound
 * parameters and plans the statement for them, as any client's parameterised query, where
 * `em.execute` writes them into the text as literals. Unnamed, so every run is planned for its
 * values (a named statement, {@link prepared}, may switch to a generic plan after five runs,
 * planned without them: fine for key look-ups, not for date ranges). Pass a list as text
 * (`= any(string_to_array(?, ',')::uuid[])`): the two drivers send arrays differently. On PGlite
 * it runs through `em()` as usual. Like {@link prepared}, it runs outside any transaction of the
 * request's EntityManager.
 */
export async function executeParameterised(orm: Orm, em: () => Em, sql: string, params: unknown[]): Promise<Record<string, unknown>[]> {
  const pool = await pgPool(orm)
  return pool ? (await pool.query({ text: numbered(sql), values: params })).rows : em().execute(sql, params)
}

/**
 * Replaces the rows of one owner in a pivot table: deletes the rows whose `owner` column is
 * `ownerId`, then inserts `rows` (each the values of `columns`, after the owner). With `ordered`,
 * each row also stores its index in `position` and `created_at = now()`. Run it inside the
 * caller's transaction, after the references were resolved (src/access/references.ts).
 */
export async function replacePivotRows(
  em: Em,
  pivot: string,
  owner: string,
  ownerId: number,
  columns: readonly string[],
  rows: readonly (readonly unknown[])[],
  options: { ordered?: boolean } = {},
): Promise<void> {
  await em.execute(`delete from ${pivot} where ${owner} = ?`, [ownerId])
  if (!rows.length) return
  const ordered = options.ordered === true
  const placeholders = ['?', ...columns.map(() => '?'), ...(ordered ? ['?'] : [])].join(', ')
  const values = rows.map(() => `(${placeholders}${ordered ? ', now()' : ''})`).join(', ')
  const names = [owner, ...columns, ...(ordered ? ['position', 'created_at'] : [])].join(', ')
  await em.execute(
    `insert into ${pivot} (${names}) values ${values}`,
    rows.flatMap((row, position) => (ordered ? [ownerId, ...row, position] : [ownerId, ...row])),
  )
}
