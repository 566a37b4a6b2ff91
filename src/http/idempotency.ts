/**
 * `Idempotency-Key` on every POST (docs/api/conventions.md, "Idempotency keys"), for every surface
 * the host serves (REST, tRPC over HTTP, the OpenAI-compatible API, uploads): hooks on the root
 * Fastify instance, so no procedure knows about it.
 *
 * - The key names a row of `idempotency_keys` by a SHA-256 of the caller's credential headers
 *   (the same token is the same user and token; no token is stored), the key, the method and the
 *   path. The first request inserts it `in_flight` with a lease; the body's fingerprint (a SHA-256
 *   of the parsed JSON with sorted keys, the query string and the workspace header; an unparsed
 *   body's type and length) is kept with it.
 * - Its answer is captured as it is written (status, the headers that describe it or name what it
 *   made, and the body's bytes, streamed answers included) and, before its last byte is sent,
 *   sealed with the service key and kept for {@link KEEP_HOURS} hours, when it is a success or a
 *   failure that names what it made (`X-Run-UUID`: the provider failed after the run was stored);
 *   any other failure removes the row, so a retry runs again.
 * - A later request with the key: another body is a 422 naming `Idempotency-Key`; one while the
 *   first is in flight a 409 with `Retry-After: 1`; otherwise the kept answer, byte for byte, with
 *   `Idempotent-Replayed: true`. A first request whose process died leaves its row in flight
 *   until its lease runs out; the next request with the key then runs as a first one.
 */
import { createHash } from 'node:crypto'
import type { IncomingHttpHeaders, ServerResponse } from 'node:http'
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify'
import type { AppDeps } from '../trpc/context.ts'
import { keyringOf, open, seal, type Keyring } from '../platform/secrets.ts'
import { VALIDATION_MESSAGE } from '../trpc/errors.ts'
import { errorBody } from './errors.ts'

/** Hours a kept answer is replayed. */
export const KEEP_HOURS = 24
/** Longest kept answer, in bytes; a longer one keeps only that it was answered (a replay is then a 409). */
const MAX_KEPT_BYTES = 8 * 1024 * 1024
/** Milliseconds between two removals of expired keys by one process. */
const PRUNE_MS = 10 * 60_000
/** The headers that name what a request made: a failure that carries one of them is kept too. */
const MADE_HEADERS = ['location', 'x-run-uuid', 'x-thread-uuid']
/** The headers a replay repeats: what the answer is, and what the first request made. */
const KEPT_HEADERS = ['content-type', 'content-disposition', 'location', 'x-run-uuid', 'x-thread-uuid', 'x-should-retry', 'cache-control']
/** The header, lower case as Node gives it. */
const HEADER = 'idempotency-key'

/** What a first request with a key holds while it is answered. */
interface Owned {
  keyHash: string
}

/** A kept answer as sealed. */
interface KeptAnswer {
  status: number
  headers: Record<string, string>
  /** Base64 of the body's bytes; absent when it was too long to keep. */
  body?: string
}

declare module 'fastify' {
  interface FastifyRequest {
    idempotency?: Owned
  }
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex')

/** JSON with object keys sorted, so key order and whitespace never change a fingerprint. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`
  if (value && typeof value === 'object') {
    const entries = Object.keys(value)
      .sort()
      .map((key) => `${JSON.stringify(key)}:${canonical((value as Record<string, unknown>)[key])}`)
    return `{${entries.join(',')}}`
  }
  return JSON.stringify(value) ?? 'undefined'
}

const header = (headers: IncomingHttpHeaders, name: string) => {
  const value = headers[name]
  return Array.isArray(value) ? value.join(',') : (value ?? '')
}

/** Why a key is malformed, or null. */
function keyProblem(key: string): string | null {
  if (key.length === 0) return 'must not be empty'
  if (key.length > 255) return 'must be at most 255 characters'
  if (!/^[\x20-\x7e]+$/.test(key)) return 'must be printable ASCII characters'
  return null
}

/** The row's key: the caller's credentials, the key, the method and the path. */
function keyHashOf(request: FastifyRequest, key: string): string {
  const caller = sha256(`${header(request.headers, 'authorization')}\n${header(request.headers, 'x-service-authorization')}`)
  return sha256(`${caller}\n${key}\n${request.method}\n${request.url.split('?')[0]}`)
}

/** The fingerprint a later request must match. */
function fingerprintOf(request: FastifyRequest): string {
  // An unparsed body (an upload) counts by its media type only: a form built again has another boundary and length.
  const body =
    request.body === undefined ? header(request.headers, 'content-type').split(';')[0].trim().toLowerCase() : canonical(request.body)
  const query = request.url.includes('?') ? request.url.slice(request.url.indexOf('?')) : ''
  return sha256(`${body}\n${query}\n${header(request.headers, 'x-workspace-uuid')}`)
}

/** A refusal in the service's error shape; a 400 or 422 names the header in `issues`, as a validation error names a field. */
const refuse = (reply: FastifyReply, request: FastifyRequest, status: number, message: string) =>
  reply
    .status(status)
    .send(
      status === 409
        ? errorBody(status, message, request.id)
        : errorBody(status, status === 400 ? VALIDATION_MESSAGE : message, request.id, [{ path: ['Idempotency-Key'], message }]),
    )

/** Kept answers a process also holds in memory (they never change once kept), and the largest it holds. */
const MEMORY_ENTRIES = 1_000
const MEMORY_ANSWER_BYTES = 16 * 1024

/**
 * The kept keys in the database (`idempotency_keys`), shared by every process; the answers this
 * process kept or replayed lately are also held in memory, so a replay in the same process
 * reads nothing (a kept answer never changes until it expires).
 */
class KeptKeys {
  readonly #keyring: Keyring
  readonly #memory = new Map<string, { fingerprint: string; answer: KeptAnswer; expiresAt: number }>()
  /** Longer than any request may take: a run's every step at the model deadline. */
  readonly #leaseSeconds: number
  #prunedAt = 0

  constructor(private readonly deps: AppDeps) {
    this.#keyring = keyringOf(deps.config)
    this.#leaseSeconds = Math.min(3600, Math.ceil((deps.config.llm.timeoutMs * deps.config.llm.maxSteps) / 1000) + 60)
  }

  #em() {
    return this.deps.orm.em.fork()
  }

  /** Removes expired keys now and then (at most every {@link PRUNE_MS} per process), in the background. */
  prune(): void {
    if (Date.now() - this.#prunedAt < PRUNE_MS) return
    this.#prunedAt = Date.now()
    this.#em()
      .execute(`delete from idempotency_keys where key_hash in (select key_hash from idempotency_keys where expires_at < now() limit 1000)`)
      .catch((error: unknown) => this.deps.log.warn({ err: error }, 'could not remove expired idempotency keys'))
  }

  /** Inserts the first request's row, or takes over an expired one or one whose lease ran out. Answers whether it now owns the key. */
  async claim(keyHash: string, fingerprint: string): Promise<boolean> {
    const [row] = await this.#em().execute<{ key_hash: string }[]>(
      `insert into idempotency_keys (key_hash, fingerprint, state, locked_until, expires_at, created_at)
       values (?, ?, 'in_flight', now() + make_interval(secs => ?), now() + make_interval(hours => ?), now())
       on conflict (key_hash) do update set fingerprint = excluded.fingerprint, state = 'in_flight', answer_ciphertext = null, answer_key_id = null,
         locked_until = excluded.locked_until, expires_at = excluded.expires_at, created_at = excluded.created_at
       where idempotency_keys.expires_at <= now() or (idempotency_keys.state = 'in_flight' and idempotency_keys.locked_until <= now())
       returning key_hash`,
      [keyHash, fingerprint, this.#leaseSeconds, KEEP_HOURS],
    )
    return Boolean(row)
  }

  /** The key's row: its fingerprint, and its kept answer once there is one; null when there is no row (or it expired). */
  async read(keyHash: string): Promise<{ fingerprint: string; answer: KeptAnswer | null } | null> {
    const held = this.#memory.get(keyHash)
    if (held && held.expiresAt > Date.now()) return held
    if (held) this.#memory.delete(keyHash)
    const [row] = await this.#em().execute<
      { fingerprint: string; state: string; ciphertext: string | null; keyId: string | null; expiresAt: Date | string }[]
    >(
      `select fingerprint, state, answer_ciphertext as ciphertext, answer_key_id as "keyId", expires_at as "expiresAt"
       from idempotency_keys where key_hash = ? and expires_at > now()`,
      [keyHash],
    )
    if (!row) return null
    if (row.state === 'in_flight' || !row.ciphertext || !row.keyId) return { fingerprint: row.fingerprint, answer: null }
    const answer = JSON.parse(open(this.#keyring, { ciphertext: row.ciphertext, keyId: row.keyId }, `idempotency:${keyHash}`)) as KeptAnswer
    this.#hold(keyHash, row.fingerprint, answer, new Date(row.expiresAt).getTime())
    return { fingerprint: row.fingerprint, answer }
  }

  /** Holds a kept answer in memory (small ones; the oldest held is let go past {@link MEMORY_ENTRIES}). */
  #hold(keyHash: string, fingerprint: string, answer: KeptAnswer, expiresAt: number): void {
    if ((answer.body?.length ?? 0) > MEMORY_ANSWER_BYTES) return
    this.#memory.delete(keyHash)
    this.#memory.set(keyHash, { fingerprint, answer, expiresAt })
    if (this.#memory.size > MEMORY_ENTRIES) this.#memory.delete(this.#memory.keys().next().value as string)
  }

  /** Keeps `answer` for the key, or removes the key when the answer is not kept. Never throws. */
  async settle(keyHash: string, fingerprint: string, answer: KeptAnswer): Promise<void> {
    // A failure is kept only when it names what it made (a run that failed at the provider after it
    // was stored); one that made nothing runs again on a retry.
    const keep = answer.status < 400 || MADE_HEADERS.some((name) => answer.headers[name] !== undefined)
    try {
      if (!keep) {
        await this.#em().execute(`delete from idempotency_keys where key_hash = ? and state = 'in_flight'`, [keyHash])
        return
      }
      const sealed = seal(this.#keyring, JSON.stringify(answer), `idempotency:${keyHash}`)
      const [kept] = await this.#em().execute<{ expiresAt: Date | string }[]>(
        `update idempotency_keys set state = 'done', answer_ciphertext = ?, answer_key_id = ? where key_hash = ? and state = 'in_flight'
         returning expires_at as "expiresAt"`,
        [sealed.ciphertext, sealed.keyId, keyHash],
      )
      if (kept) this.#hold(keyHash, fingerprint, answer, new Date(kept.expiresAt).getTime())
    } catch (error) {
      // The key stays in flight until its lease runs out; a retry then runs again.
      this.deps.log.warn({ err: error }, 'could not keep the answer of an idempotent request')
    }
  }
}

const IN_FLIGHT = 'A request with this Idempotency-Key is being processed; retry shortly'

/**
 * Adds the hooks to `app` (the root instance, before the routes are registered).
 * @param deps the runtime: its database and configuration (the service key, the request deadlines).
 */
export function addIdempotencyHooks(app: FastifyInstance, deps: AppDeps): void {
  const keys = new KeptKeys(deps)
  const own = (request: FastifyRequest, reply: FastifyReply, keyHash: string, fingerprint: string) => {
    request.idempotency = { keyHash }
    capture(reply.raw, (answer) => keys.settle(keyHash, fingerprint, answer))
  }
  app.addHook('preHandler', async (request, reply) => {
    if (request.method !== 'POST' || request.headers[HEADER] === undefined) return
    const key = header(request.headers, HEADER)
    const problem = keyProblem(key)
    if (problem) return refuse(reply, request, 400, `Idempotency-Key ${problem}`)
    const keyHash = keyHashOf(request, key)
    const fingerprint = fingerprintOf(request)
    keys.prune()
    // A replay reads once (from memory, or one row); a first request claims after its read found no answer
    // (the claim also takes over an expired row, or one whose first request's process died).
    let kept = await keys.read(keyHash)
    if (!kept?.answer && (await keys.claim(keyHash, fingerprint))) return own(request, reply, keyHash, fingerprint)
    // Claimed by another request between the read and the claim.
    kept ??= await keys.read(keyHash)
    if (kept && kept.fingerprint !== fingerprint) {
      return refuse(reply, request, 422, 'Idempotency-Key was used with another request body: use a new key for a new request')
    }
    if (!kept?.answer) return refuse(reply.header('retry-after', '1'), request, 409, IN_FLIGHT)
    if (kept.answer.body === undefined) {
      return refuse(reply, request, 409, 'The answer of this Idempotency-Key was too large to keep: retrieve what it made instead')
    }
    void reply.status(kept.answer.status).headers(kept.answer.headers).header('idempotent-replayed', 'true')
    return reply.send(Buffer.from(kept.answer.body, 'base64'))
  })
}

/**
 * Captures what `res` writes (status, the {@link KEPT_HEADERS}, the body) and hands it to `keep`
 * before the last byte goes out, so a retry that follows the answer finds it kept. A connection
 * closed mid-answer (a stream cut short) hands over what was written so far; one closed before
 * the answer began waits for the handler's answer, which still goes through `end`.
 */
function capture(res: ServerResponse, keep: (answer: KeptAnswer) => Promise<void>): void {
  const chunks: Buffer[] = []
  let size = 0
  let written: Record<string, unknown> = {}
  let settled = false
  const answer = (): KeptAnswer => {
    const headers: Record<string, string> = {}
    const all = { ...res.getHeaders(), ...written }
    for (const name of KEPT_HEADERS) {
      const value = all[name] ?? Object.entries(all).find(([key]) => key.toLowerCase() === name)?.[1]
      if (value !== undefined) headers[name] = String(value)
    }
    return { status: res.statusCode, headers, ...(size <= MAX_KEPT_BYTES ? { body: Buffer.concat(chunks).toString('base64') } : {}) }
  }
  const add = (chunk: unknown, encoding: unknown) => {
    if (chunk === undefined || chunk === null || typeof chunk === 'function') return
    const bytes = Buffer.isBuffer(chunk)
      ? chunk
      : typeof chunk === 'string'
        ? Buffer.from(chunk, typeof encoding === 'string' ? (encoding as BufferEncoding) : 'utf8')
        : Buffer.from(chunk as Uint8Array)
    size += bytes.length
    if (size <= MAX_KEPT_BYTES) chunks.push(bytes)
    else chunks.length = 0
  }
  const writeHead = res.writeHead.bind(res)
  const write = res.write.bind(res)
  const end = res.end.bind(res)
  res.writeHead = ((status: number, ...rest: unknown[]) => {
    const headers = rest.find((item) => typeof item === 'object' && item !== null && !Array.isArray(item))
    if (headers) written = { ...written, ...Object.fromEntries(Object.entries(headers).map(([key, value]) => [key.toLowerCase(), value])) }
    return (writeHead as (...args: unknown[]) => ServerResponse)(status, ...rest)
  }) as ServerResponse['writeHead']
  res.write = ((chunk: unknown, ...rest: unknown[]) => {
    add(chunk, rest[0])
    return (write as (...args: unknown[]) => boolean)(chunk, ...rest)
  }) as ServerResponse['write']
  res.end = ((chunk?: unknown, ...rest: unknown[]) => {
    add(chunk, rest[0])
    if (settled) return (end as (...args: unknown[]) => ServerResponse)(chunk, ...rest)
    settled = true
    void keep(answer()).finally(() => (end as (...args: unknown[]) => ServerResponse)(chunk, ...rest))
    return res
  }) as ServerResponse['end']
  res.once('close', () => {
    // A client gone before any answer (a timeout, then a retry): the handler still answers into the
    // closed response, and that answer, not an empty 200, is what the end above keeps.
    if (settled || !res.headersSent) return
    settled = true
    void keep(answer())
  })
}
