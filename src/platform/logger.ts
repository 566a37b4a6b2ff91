/**
 * The process logger: pino, JSON lines, secrets redacted (docs/operations.md, "Logs").
 * Services and engines take the {@link Logger} type from here rather than from Fastify.
 */
import type { FastifyBaseLogger } from 'fastify'
import { pino } from 'pino'
import type { Config } from './config.ts'

/** A pino logger as Fastify uses it: levels plus `child`. */
export type Logger = FastifyBaseLogger

/** Header and field names whose values never reach a log line. */
export const REDACTED = [
  'req.headers.authorization',
  'req.headers["x-service-authorization"]',
  'req.headers.cookie',
  'password',
  'access_token',
]

/** A pino logger at the configured level, JSON lines, secrets redacted. */
export function createLogger(config: Pick<Config, 'logLevel'>): Logger {
  return pino({ level: config.logLevel, redact: { paths: REDACTED, censor: '[redacted]' } })
}
