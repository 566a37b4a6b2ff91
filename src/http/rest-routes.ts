/**
 * The REST paths and the methods each has, read from the OpenAPI document (docs.plugin.ts: every
 * procedure's method and path, and the plain routes beside them), for the answers
 * trpc-to-openapi cannot give (docs/api/conventions.md, "Errors"): a method the path does not have
 * is a 405 with `Allow`, and a path segment in a uuid position that is not even an attempt at a
 * uuid ({@link UUID_ATTEMPT}) names no route, a 404.
 */
import type { OpenAPIObject } from 'trpc-to-openapi'

/** The methods of the REST surface, in the order `Allow` lists them. */
const METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const

/**
 * A path segment in a uuid position is read as a uuid when it holds only hexadecimal digits and
 * hyphens: then a malformed one is a 400 naming the parameter. Anything else
 * (`/api/v1/agents/no-such-thing`) is not a uuid at all, so no route has that path.
 */
export const UUID_ATTEMPT = /^[0-9a-f-]+$/i

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')

/** A path as trpc-to-openapi matches it: one leading slash, no trailing one. */
export const normalizePath = (path: string) => `/${path.replace(/^\/|\/$/g, '')}`

interface Operation {
  method: string
  pattern: RegExp
}

/** The uuid-format path parameters of one operation. */
export function uuidParams(operation: { parameters?: unknown[] }): Set<string> {
  const names = new Set<string>()
  for (const parameter of operation.parameters ?? []) {
    if (typeof parameter !== 'object' || parameter === null || !('in' in parameter) || parameter.in !== 'path') continue
    const schema = 'schema' in parameter ? parameter.schema : undefined
    const isUuid = typeof schema === 'object' && schema !== null && 'format' in schema && schema.format === 'uuid'
    if (isUuid && 'name' in parameter && typeof parameter.name === 'string') names.add(parameter.name)
  }
  return names
}

/** The expression of a templated path: a parameter is one segment, uuid-shaped where its format is uuid. */
export function patternOf(template: string, uuids: Set<string>): RegExp {
  const parts = normalizePath(template)
    .split(/(\{\w+\})/)
    .map((part) => {
      const param = /^\{(\w+)\}$/.exec(part)?.[1]
      if (!param) return escapeRegExp(part)
      return uuids.has(param) ? '[0-9a-f-]+' : '[^/]+'
    })
  // Case-insensitive, as trpc-to-openapi matches.
  return new RegExp(`^${parts.join('')}$`, 'i')
}

/** The number of segments of a normalized path, to look at only the operations that may match. */
const depthOf = (path: string) => path.split('/').length

/**
 * The methods of every path of the document: `methodsOf(path)` answers the methods whose
 * operation matches the normalized path (without its query), in {@link METHODS} order; none for
 * a path no operation has.
 */
export function restRoutes(doc: Pick<OpenAPIObject, 'paths'>): (path: string) => string[] {
  const byDepth = new Map<number, Operation[]>()
  for (const [template, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const operation: { parameters?: unknown[] } | undefined = item[method.toLowerCase() as Lowercase<typeof method>]
      if (!operation) continue
      const depth = depthOf(normalizePath(template))
      byDepth.set(depth, [...(byDepth.get(depth) ?? []), { method, pattern: patternOf(template, uuidParams(operation)) }])
    }
  }
  return (path) => {
    const normalized = normalizePath(path)
    const matched = new Set((byDepth.get(depthOf(normalized)) ?? []).filter((op) => op.pattern.test(normalized)).map((op) => op.method))
    return METHODS.filter((method) => matched.has(method))
  }
}
