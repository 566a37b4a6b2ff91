/**
 * The Redis subscription the per-process caches (auth-cache.ts, read-cache.ts) listen on for the
 * other processes' invalidations. A subscribed connection can run no other command, so each is a
 * duplicate of the main connection.
 */
import type { RedisClientType } from '@keyv/redis'

/**
 * Subscribes a new connection to `channel`.
 * @param onMessage called with each message's text.
 * @param onReconnect called when the connection is ready again after a drop: messages sent
 *   meanwhile are lost, so a cache must start empty.
 * @param onEnd called when the main connection ends (the cache closes with it).
 * @throws when the connection or the subscription fails.
 */
export async function subscribe(
  redis: RedisClientType,
  channel: string,
  handlers: {
    label: string
    log: { error: (object: object, message: string) => void }
    onMessage: (raw: string) => void
    onReconnect: () => void
    onEnd: () => void
  },
): Promise<RedisClientType> {
  const subscriber = redis.duplicate()
  subscriber.on('error', (error: unknown) => handlers.log.error({ err: error }, `${handlers.label} subscriber error`))
  await subscriber.connect()
  await subscriber.subscribe(channel, handlers.onMessage)
  subscriber.on('ready', handlers.onReconnect)
  // Never the reason a process stays alive; closed with the main connection.
  subscriber.unref()
  redis.once('end', handlers.onEnd)
  return subscriber
}
