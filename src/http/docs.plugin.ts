/**
 * `GET /openapi.json` and `GET /docs`: the OpenAPI 3.1 document generated from the routers and
 * the plain routes beside them, and the reference page rendered from it (docs/architecture.md).
 */
import type { FastifyInstance } from 'fastify'
import { generateOpenApiDocument } from 'trpc-to-openapi'
import { appRouter } from '../../routers/index.ts'
import type { Config } from '../platform/config.ts'
import { renderDocs } from './docs.ts'
import { MEDIA_OPENAPI_PATHS } from './media.routes.ts'
import { RUN_EVENTS_OPENAPI_PATHS } from './run-events.routes.ts'
import { WEBHOOK_OPENAPI_PATHS } from './webhook.routes.ts'

/** Builds the OpenAPI 3.1 document from the routers (once per process). */
export function openApiDocument(baseUrl: string) {
  return generateOpenApiDocument(appRouter, {
    title: 'Agent Workspace Service',
    version: '1.0.0',
    description:
      'Multi-tenant backend for AI assistants in workspaces. Every operation is also a tRPC procedure at /trpc/<router>.<procedure>.',
    baseUrl,
    securitySchemes: { bearerAuth: { type: 'http', scheme: 'bearer' } },
    // The upload, download, event stream and webhook routes are plain Fastify routes beside the procedures.
    paths: { ...MEDIA_OPENAPI_PATHS, ...RUN_EVENTS_OPENAPI_PATHS, ...WEBHOOK_OPENAPI_PATHS },
  })
}

/** What the documentation needs from the host. */
export interface DocsOptions {
  /** `appUrl` is the document's server URL. */
  config: Pick<Config, 'appUrl'>
}

/** Registers both routes; each builds its answer on first request, which most processes never get. */
export async function docsPlugin(scope: FastifyInstance, options: DocsOptions): Promise<void> {
  let openApiJson: string | undefined
  let docsHtml: string | undefined
  scope.get('/openapi.json', (_request, reply) => {
    openApiJson ??= JSON.stringify(openApiDocument(options.config.appUrl))
    return reply.type('application/json').send(openApiJson)
  })
  scope.get('/docs', (_request, reply) => {
    docsHtml ??= renderDocs(openApiDocument(options.config.appUrl))
    return reply.type('text/html; charset=utf-8').send(docsHtml)
  })
}
