/**
 * The service scope of X-Service-Authorization (docs/api/authentication.md), for the procedures
 * (./init.ts) and the plain Fastify routes (src/http/media.routes.ts) alike.
 */
import { hash } from 'node:crypto'
import type { IncomingHttpHeaders } from 'node:http'
import { UnauthorizedError } from '../platform/errors.ts'
import type { AppDeps } from './context.ts'

/** sha256 of a service key, hex: how `AppDeps.serviceKeyHashes` holds the keys. */
export const hashKey = (key: string) => hash('sha256', key, 'hex')

/**
 * Null without the header (or with an empty one), else the service whose key it is.
 * @throws UnauthorizedError for a non-empty header that is no configured key.
 */
export function serviceIdOf(headers: IncomingHttpHeaders, deps: Pick<AppDeps, 'serviceKeyHashes'>): string | null {
  const raw = headers['x-service-authorization']
  const key = (Array.isArray(raw) ? raw[0] : raw)?.trim()
  if (!key) return null
  // Compare hashes, so lookup time says nothing about how much of a guessed key was right.
  const serviceId = deps.serviceKeyHashes.get(hashKey(key))
  if (!serviceId) throw new UnauthorizedError('Invalid service key')
  return serviceId
}
