/**
 * PostgreSQL's LISTEN/NOTIFY on the service's database, in both storage modes: a module that
 * records work in a transaction (`pg_notify(channel, '')` in it, delivered only when it commits)
 * wakes the processes that work it at once rather than at their next poll. A notification is a
 * hint, never the only way work is found: a listener that is down loses notifications, so its
 * owner still looks now and then.
 *
 * PostgreSQL: one connection of its own (`pg`), reconnected after a pause while the database is
 * away. PGlite: the instance's own `listen`.
 */
import pg from 'pg'
import { PgliteConnection } from '@mikro-orm/pglite'
import type { Logger } from './logger.ts'
import type { Orm } from './db.ts'

/** Milliseconds between reconnection tries of a lost PostgreSQL listener. */
const RECONNECT_MS = 2_000

/** Stops listening. */
export type Unlisten = () => Promise<void>

/**
 * Calls `onNotify` for each notification on `channel` (a plain identifier) until the answer is
 * called. Never throws: a listener that cannot connect is logged and retried.
 */
export async function listen(
  orm: Orm,
  databaseUrl: string | undefined,
  channel: string,
  onNotify: () => void,
  log: Logger,
): Promise<Unlisten> {
  if (!/^[a-z_][a-z0-9_]*$/.test(channel)) throw new Error(`Not a channel name: ${channel}`)
  const connection = orm.em.getConnection()
  if (connection instanceof PgliteConnection) {
    const native = (await connection.getNativeClient()) as unknown as {
      listen(channel: string, callback: () => void): Promise<() => Promise<void>>
    }
    try {
      const unlisten = await native.listen(channel, onNotify)
      return async () => {
        await unlisten().catch(() => undefined)
      }
    } catch (error) {
      log.warn({ err: error, channel }, 'could not listen for notifications; relying on polling')
      return async () => {}
    }
  }
  let client: pg.Client | undefined
  let timer: NodeJS.Timeout | undefined
  let stopped = false
  const connect = async (): Promise<void> => {
    if (stopped) return
    const next = new pg.Client({ connectionString: databaseUrl, application_name: 'agent-workspace-listen', keepAlive: true })
    next.on('notification', (message) => {
      if (message.channel === channel) onNotify()
    })
    const retry = () => {
      if (client === next) client = undefined
      next.end().catch(() => undefined)
      if (!stopped && !timer) timer = setTimeout(() => ((timer = undefined), void connect()), RECONNECT_MS).unref()
    }
    next.on('error', (error) => {
      log.warn({ err: error, channel }, 'notification listener lost its connection')
      retry()
    })
    try {
      await next.connect()
      await next.query(`listen ${channel}`)
      if (stopped) return void (await next.end().catch(() => undefined))
      client = next
      // Work recorded while the listener was away was not announced to it.
      onNotify()
    } catch (error) {
      log.warn({ err: error, channel }, 'could not listen for notifications; trying again')
      retry()
    }
  }
  await connect()
  return async () => {
    stopped = true
    clearTimeout(timer)
    await client?.end().catch(() => undefined)
  }
}
