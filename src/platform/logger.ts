/**
 * The process logger: pino, JSON lines, secrets redacted (docs/operations.md, "Logs").
 * Services and engines take the {@link Logger} type from here rather than from Fastify.
 */
import type { FastifyBaseLogger } from 'fastify'
import { pino, type LoggerOptions } from 'pino'
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

/**
 * Query parameters whose values are credentials: OpenID Connect's authorization `code` and
 * `state` arrive in the callback's URL, and tokens are sometimes put in a URL by clients that
 * cannot set headers. Request lines keep the parameter's name and lose its value.
 */
const SECRET_QUERY_PARAMETER =
  /([?&](?:code|state|token|access_token|id_token|refresh_token|client_secret|api_key|key|secret|password|signature|sig)=)[^&#]*/gi

/**
 * A request URL as logged: the path as sent, the values of credential-bearing query parameters
 * replaced by `[redacted]`.
 * @example redactUrl('/v1/auth/oidc/callback?code=abc&state=x') === '/v1/auth/oidc/callback?code=[redacted]&state=[redacted]'
 */
export function redactUrl(url: string): string {
  return url.replace(SECRET_QUERY_PARAMETER, '$1[redacted]')
}

/** The request as Fastify logs it (its own `req` serializer's fields), with the URL redacted. */
function requestForLog(request: { method: string; url: string; host?: string; ip?: string; socket?: { remotePort?: number } }) {
  return {
    method: request.method,
    url: redactUrl(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  }
}

/** pino options every logger of the service takes: redacted paths and the request serializer. */
export const LOG_OPTIONS = {
  redact: { paths: REDACTED, censor: '[redacted]' },
  serializers: { req: requestForLog },
} satisfies LoggerOptions

/**
 * A pino logger at the configured level, secrets redacted: JSON lines, or, when standard output is
 * a terminal (a person running `npm start`), the same lines made readable by pino-pretty (in
 * pino's worker thread). Log collectors read a pipe or a file, so they always get JSON.
 * @param stdout where the lines go; only its `isTTY` is read (the process's by default).
 */
export function createLogger(config: Pick<Config, 'logLevel'>, stdout: { isTTY?: boolean } = process.stdout): Logger {
  if (stdout.isTTY !== true) return pino({ level: config.logLevel, ...LOG_OPTIONS })
  return pino({
    level: config.logLevel,
    ...LOG_OPTIONS,
    transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l', ignore: 'pid,hostname' } },
  })
}
