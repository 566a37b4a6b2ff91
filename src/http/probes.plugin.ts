/**
 * `GET /health` and `GET /ready`, the probes of a load balancer or orchestrator
 * (docs/architecture.md): health says the process answers, readiness that its database does.
 */
import type { FastifyInstance } from 'fastify'
import type { AppDeps } from '../trpc/context.ts'

/** What the probes need from the host. */
export interface ProbesOptions {
  deps: Pick<AppDeps, 'orm'>
}

/** Registers the two probes. */
export async function probesPlugin(scope: FastifyInstance, options: ProbesOptions): Promise<void> {
  const { orm } = options.deps
  scope.get('/health', () => ({ status: 'ok' }))
  scope.get('/ready', async (request, reply) => {
    try {
      await orm.em.fork().execute('select 1')
      return { status: 'ok', database: 'ok' }
    } catch (error) {
      request.log.warn({ err: error }, 'database not reachable')
      return reply.status(503).send({ status: 'unavailable', database: 'unreachable' })
    }
  })
}
