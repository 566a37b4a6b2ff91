/**
 * `GET /health` and `GET /ready`, the probes of a load balancer or orchestrator
 * (docs/operations.md, "Health checks"): health says the process answers, readiness that every
 * dependency it needs does.
 */
import type { FastifyInstance } from 'fastify'
import type { AppDeps } from '../trpc/context.ts'

/** What the probes need from the host. */
export interface ProbesOptions {
  deps: Pick<AppDeps, 'orm' | 'redis' | 'knowledge'>
}

/** Seconds a client of a 503 from `/ready` is told to wait (`Retry-After`). */
const READY_RETRY_AFTER_SECONDS = 1

/**
 * Registers the two probes. `/ready` answers 200 `{status: 'ok', database: 'ok', redis}` or 503
 * `{status: 'unavailable', database, redis}` with `Retry-After`, where `database` is `ok` or
 * `unreachable` (`select 1`) and `redis` is `ok`, `unreachable` (PING within the command deadline,
 * refused at once while Redis is known down: src/platform/redis.ts) or `disabled` (no REDIS_URL).
 * A dependency that is configured is required. `knowledge` names the retrieval mode of this
 * database, `hybrid` or `full-text` (docs/api/knowledge.md, "Retrieval"): a fact, not a check.
 */
export async function probesPlugin(scope: FastifyInstance, options: ProbesOptions): Promise<void> {
  const { orm, redis, knowledge } = options.deps
  scope.get('/health', () => ({ status: 'ok' }))
  scope.get('/ready', async (request, reply) => {
    const [database, cache] = await Promise.all([
      orm.em
        .fork()
        .execute('select 1')
        .then(
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
