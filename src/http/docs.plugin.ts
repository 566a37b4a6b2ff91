/**
 * `GET /openapi.json` and `GET /docs`: the OpenAPI 3.1 document of ./openapi-document.ts and the
 * reference page rendered from it (docs/architecture.md).
 */
import type { FastifyInstance } from 'fastify'
import type { Config } from '../platform/config.ts'
import { renderDocs } from './docs.ts'
import { openApiDocument } from './openapi-document.ts'

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
