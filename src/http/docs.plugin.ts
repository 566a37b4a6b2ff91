/**
 * `GET /openapi.json`, `GET /docs` and `GET /docs/assets/<file>`: the OpenAPI 3.1 document of
 * ./openapi-document.ts, and the interactive reference of ./docs.ts that reads it
 * (docs/api/conventions.md, "The OpenAPI document").
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { Config } from '../platform/config.ts'
import { errorBody } from './errors.ts'
import { DOCS_CONTENT_SECURITY_POLICY, gzippedAsset, loadDocsAssets, renderDocsPage, type DocsAssets } from './docs.ts'
import { openApiDocument } from './openapi-document.ts'

/** What the documentation needs from the host. */
export interface DocsOptions {
  /** `appUrl` is the document's server URL. */
  config: Pick<Config, 'appUrl'>
}

/** An asset's name changes with its content, so a browser may keep it for a year without asking. */
const ASSET_CACHE_CONTROL = 'public, max-age=31536000, immutable'

/**
 * Registers the routes; each builds its answer on first request, which most processes never get
 * (the bundle is read from node_modules then, and kept).
 */
export async function docsPlugin(scope: FastifyInstance, options: DocsOptions): Promise<void> {
  let openApiJson: string | undefined
  let docsHtml: string | undefined
  let assets: Promise<DocsAssets> | undefined
  const loadAssets = () => (assets ??= loadDocsAssets())

  scope.get('/openapi.json', (_request, reply) => {
    openApiJson ??= JSON.stringify(openApiDocument(options.config.appUrl))
    return reply.type('application/json').send(openApiJson)
  })
  scope.get('/docs', async (_request, reply) => {
    docsHtml ??= renderDocsPage(openApiDocument(options.config.appUrl).info.title, await loadAssets())
    return (
      reply
        .type('text/html; charset=utf-8')
        .header('content-security-policy', DOCS_CONTENT_SECURITY_POLICY)
        .header('x-content-type-options', 'nosniff')
        .header('referrer-policy', 'no-referrer')
        // The page names the current assets, so it is checked on every visit.
        .header('cache-control', 'no-cache')
        .send(docsHtml)
    )
  })
  scope.get<{ Params: { file: string } }>('/docs/assets/:file', async (request, reply) => sendAsset(request, reply, await loadAssets()))
}

/** Answers one of the page's scripts, gzipped when the client takes it; any other name is a 404. */
async function sendAsset(request: FastifyRequest<{ Params: { file: string } }>, reply: FastifyReply, assets: DocsAssets) {
  const asset = [assets.reference, assets.start].find((candidate) => candidate.name === request.params.file)
  if (!asset) return reply.status(404).send(errorBody(404, 'Route not found', request.id))
  void reply
    .type('text/javascript; charset=utf-8')
    .header('cache-control', ASSET_CACHE_CONTROL)
    .header('x-content-type-options', 'nosniff')
    .header('vary', 'accept-encoding')
  const acceptEncoding = request.headers['accept-encoding']
  if (typeof acceptEncoding === 'string' && /\bgzip\b/.test(acceptEncoding)) {
    return reply.header('content-encoding', 'gzip').send(await gzippedAsset(asset))
  }
  return reply.send(asset.body)
}
