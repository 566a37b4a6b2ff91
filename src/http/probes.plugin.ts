/**
 * `GET /health` and `GET /ready`, the probes of a load balancer or orchestrator
 * (docs/operations.md, "Health checks"): health says the process answers, readiness that every
 * dependency it needs does.
 */
import type { FastifyInstance } from 'fastify'
import type { AppDeps } from '../trpc/context.ts'
import { within } from '../platform/deadline.ts'

/** What the probes need from the host. */
export interface ProbesOptions {
  deps: Pick<AppDeps, 'orm' | 'redis' | 'knowledge'>
}

/** Seconds a client of a 503 from `/ready` is told to wait (`Retry-After`). */
const READY_RETRY_AFTER_SECONDS = 1

/**
 * Milliseconds the database gets to answer `/ready`'s `select 1`: a stalled database (or a pool
 * whose connections are all taken) makes the probe answer 503 within about this, rather than
 * after the pool's connect deadline or never.
 */
export const READY_DATABASE_DEADLINE_MS = 1_000

/**
 * Registers the two probes. `/ready` answers 200 `{status: 'ok', database: 'ok', redis}` or 503
 * `{status: 'unavailable', database, redis}` with `Retry-After`, where `database` is `ok` or
 * `unreachable` (`select 1`, answered within {@link READY_DATABASE_DEADLINE_MS}) and `redis` is
 * `ok`, `unreachable` (PING within the command deadline, refused at once while Redis is known
 * down: src/platform/redis.ts) or `disabled` (no REDIS_URL). A dependency that is configured is
 * required. `knowledge` names the retrieval mode of this database, `hybrid` or `full-text`
 * (docs/api/knowledge.md, "Retrieval"): a fact, not a check. docs/operations.md, "Health checks".
 */
export async function probesPlugin(scope: FastifyInstance, options: ProbesOptions): Promise<void> {
  const { orm, redis, knowledge } = options.deps
  scope.get('/health', () => ({ status: 'ok' }))
  scope.get('/ready', async (request, reply) => {
    const [database, cache] = await Promise.all([
      within(orm.em.fork().execute('select 1'), READY_DATABASE_DEADLINE_MS).then(
        () => 'ok' as const,
        (error: unknown) => {
          request.log.warn({ err: error }, 'database not reachable')
          return 'unreachable' as const
        },
      ),
      redis
        ? redis.ping().then(
            () => 'ok' as const,
            (error: unknown) => {
              request.log.warn({ err: error }, 'redis not reachable')
              return 'unreachable' as const
            },
          )
        : ('disabled' as const),
    ])
    if (database === 'ok' && cache !== 'unreachable') return { status: 'ok', database, redis: cache, knowledge: knowledge.mode }
    return reply
      .status(503)
      .header('retry-after', String(READY_RETRY_AFTER_SECONDS))
      .send({ status: 'unavailable', database, redis: cache, knowledge: knowledge.mode })
  })
}
