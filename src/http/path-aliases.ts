/**
 * Second REST paths of procedures (`alsoAt` in their meta, src/trpc/init.ts): the specification's
 * `/v1/<resource>/metrics` beside `/api/v1/<resource>/metrics`. trpc-to-openapi gives a procedure
 * one path, so the REST host rewrites an alias to the procedure's own path before anything reads
 * it (src/http/rest.plugin.ts), and the OpenAPI document lists the alias as a copy of the
 * operation under an operationId of its own (src/http/openapi-document.ts).
 */
import { forEachOpenApiProcedure } from 'trpc-to-openapi'
import { appRouter } from '../../routers/index.ts'
import type { Meta } from '../trpc/init.ts'
import { normalizePath } from './rest-routes.ts'

/** One alias: the second path, the procedure's own path, and the operation's method (lower case). */
export interface PathAlias {
  alias: string
  path: string
  method: 'get' | 'post' | 'put' | 'patch' | 'delete'
}

/** Every alias the routers declare, in router order. */
export function pathAliases(): PathAlias[] {
  const aliases: PathAlias[] = []
  forEachOpenApiProcedure<Meta>(appRouter._def.procedures, ({ meta }) => {
    if (!meta.alsoAt) return
    const method = meta.openapi.method.toLowerCase()
    if (method !== 'get' && method !== 'post' && method !== 'put' && method !== 'patch' && method !== 'delete') return
    aliases.push({ alias: meta.alsoAt, path: meta.openapi.path, method })
  })
  return aliases
}

/**
 * A function from a request URL to the URL the procedure answers at: an alias path (matched as
 * trpc-to-openapi matches, case-insensitive and without a trailing slash) becomes its procedure's
 * path with the query kept; any other URL is returned as it is.
 */
export function aliasRewriter(aliases: PathAlias[]): (url: string) => string {
  const byAlias = new Map(aliases.map(({ alias, path }) => [normalizePath(alias).toLowerCase(), path]))
  return (url) => {
    const query = url.indexOf('?')
    const path = query === -1 ? url : url.slice(0, query)
    const target = byAlias.get(normalizePath(path).toLowerCase())
    return target === undefined ? url : target + (query === -1 ? '' : url.slice(query))
  }
}
