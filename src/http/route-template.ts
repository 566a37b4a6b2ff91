/**
 * The route template of a request, for logs (docs/operations.md, "Logs"): the template of the
 * operation it reached, never the raw path, so lines group by operation and carry no ids. Fastify
 * knows the templates of its own routes; the REST surface is one catch-all route whose handler
 * finds the operation (./rest-handler.ts) and records its OpenAPI path here.
 */
import type { FastifyRequest } from 'fastify'

const templates = new WeakMap<FastifyRequest, string | null>()

/**
 * Records the operation's template (`/api/v1/agents/{agent_uuid}`) for `request`; null when the
 * catch-all route found no operation, so that its own pattern (`/*`) is never taken for one.
 */
export function setRouteTemplate(request: FastifyRequest, template: string | null): void {
  templates.set(request, template)
}

/** The operation's template when one was recorded, else Fastify's route (`/health`), else null (no route or no operation matched). */
export function routeTemplateOf(request: FastifyRequest): string | null {
  const recorded = templates.get(request)
  return recorded !== undefined ? recorded : (request.routeOptions.url ?? null)
}
