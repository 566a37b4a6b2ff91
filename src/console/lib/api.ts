/**
 * The console's only way to the service: tRPC's client typed by `AppRouter` (docs/api/clients.md).
 * Queries go over HTTP in batches to /trpc; subscriptions (a run's events) over Server-Sent
 * Events, which reconnect on their own and resume after the last event seen. The bearer token and
 * the chosen workspace travel as headers (as tRPC connectionParams on SSE, where a browser cannot
 * set headers).
 *
 * Mutations go one per request, each with an `Idempotency-Key` (docs/api/conventions.md,
 * "Idempotency keys") fixed for the call: {@link idempotencyLink} gives a call its key, and
 * sends the same operation again (so the same key) after a network failure or a
 * 409/503 that says when to come back. The service then answers a retry of something it already
 * did with the kept answer, byte for byte (`Idempotent-Replayed: true`), which reads as the first.
 * The same mutation with the same input while one is still on its way (a double click on a
 * screen that did not guard it) takes that one's key, so the service makes one thing.
 */
import { createTRPCClient, httpBatchLink, httpLink, httpSubscriptionLink, splitLink, TRPCClientError, type TRPCLink } from '@trpc/client'
import { observable } from '@trpc/server/observable'
import type { AppRouter, ErrorIssue, RouterInputs, RouterOutputs } from '../../../routers/client.ts'

export type { AppRouter, RouterInputs, RouterOutputs }

const TOKEN_KEY = 'aw.console.token'
const WORKSPACE_KEY = 'aw.console.workspace'

/** The signed-in token and the workspace the console acts in, kept in localStorage. */
export const credentials = {
  get token(): string | null {
    return localStorage.getItem(TOKEN_KEY)
  },
  set token(value: string | null) {
    if (value) localStorage.setItem(TOKEN_KEY, value)
    else localStorage.removeItem(TOKEN_KEY)
  },
  get workspace(): string | null {
    return localStorage.getItem(WORKSPACE_KEY)
  },
  set workspace(value: string | null) {
    if (value) localStorage.setItem(WORKSPACE_KEY, value)
    else localStorage.removeItem(WORKSPACE_KEY)
  },
}

/** The headers of every call: the token, and the workspace context (X-Workspace-UUID). */
function headers(): Record<string, string> {
  const result: Record<string, string> = {}
  if (credentials.token) result.authorization = `Bearer ${credentials.token}`
  if (credentials.workspace) result['x-workspace-uuid'] = credentials.workspace
  return result
}

const url = `${location.origin}/trpc`

/** The key a mutation travels with, in its operation's context. */
const KEY = 'idempotencyKey'

/** A new key: random, printable ASCII (crypto.randomUUID needs a secure context; plain http on a LAN address is not one). */
function newKey(): string {
  if (typeof crypto.randomUUID === 'function') return crypto.randomUUID()
  return Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, '0')).join('')
}

/** Seconds from a failed call's Retry-After header (on a 429, a 503, or a 409 of a key still being answered), or null. */
export function retryAfterOf(error: unknown): number | null {
  if (!(error instanceof TRPCClientError)) return null
  const response = (error.meta as { response?: Response } | undefined)?.response
  const value = response?.headers?.get('retry-after')
  if (!value) return null
  const seconds = Number(value)
  if (Number.isFinite(seconds)) return Math.max(0, seconds)
  const at = Date.parse(value)
  return Number.isNaN(at) ? null : Math.max(0, Math.round((at - Date.now()) / 1000))
}

/** Longest wait before a mutation is sent again by itself; a longer Retry-After is the person's to decide. */
const MAX_AUTO_WAIT_SECONDS = 5
/** Tries of one mutation call, the first included. */
const MAX_TRIES = 4

/**
 * Milliseconds before a mutation that failed with `error` on try `tries` is sent again, or null
 * when it is not: only when no answer came at all (the network), or a 409 of the key still being
 * answered or a 503 of a service restarting or short of its database, which say when
 * (Retry-After). A 429 is not: a rate limit or a budget is the person's to read. Queries are
 * retried by the query cache (main.tsx).
 */
function retryDelay(error: unknown, tries: number): number | null {
  if (tries >= MAX_TRIES || !(error instanceof TRPCClientError)) return null
  const status = (error.data as { httpStatus?: number } | undefined)?.httpStatus ?? 0
  const answered = Boolean((error.meta as { response?: Response } | undefined)?.response)
  if (status === 0 && !answered) return 500 * tries
  if (status !== 409 && status !== 503) return null
  const wait = retryAfterOf(error)
  return wait !== null && wait <= MAX_AUTO_WAIT_SECONDS ? wait * 1000 : null
}

/**
 * Gives each mutation call its Idempotency-Key, unless its context brings one, and sends the same
 * operation again, key and all, while {@link retryDelay} says so. A call identical to one still on
 * its way (same procedure, same input) takes that one's key: the service answers it 409 until the
 * first is done (so it waits), then with the first's answer.
 */
function idempotencyLink(): TRPCLink<AppRouter> {
  const onTheirWay = new Map<string, { key: string; calls: number }>()
  return () =>
    ({ op, next }) => {
      if (op.type !== 'mutation') return next(op)
      const given = op.context[KEY]
      const same = `${op.path}\n${JSON.stringify(op.input) ?? ''}`
      const entry = typeof given === 'string' ? { key: given, calls: 0 } : (onTheirWay.get(same) ?? { key: newKey(), calls: 0 })
      if (typeof given !== 'string') {
        entry.calls += 1
        onTheirWay.set(same, entry)
      }
      const keyed = { ...op, context: { ...op.context, [KEY]: entry.key } }
      // Once the call is answered the key is spent: an identical call after it is a new submission.
      let released = typeof given === 'string'
      const release = () => {
        if (released) return
        released = true
        entry.calls -= 1
        if (entry.calls === 0 && onTheirWay.get(same) === entry) onTheirWay.delete(same)
      }
      return observable((observer) => {
        let subscription: { unsubscribe: () => void } | undefined
        let timer: ReturnType<typeof setTimeout> | undefined
        let done = false
        const attempt = (tries: number) => {
          subscription = next(keyed).subscribe({
            next: (value) => observer.next(value),
            complete: () => {
              release()
              observer.complete()
            },
            error: (error) => {
              const delay = done ? null : retryDelay(error, tries)
              if (delay !== null) {
                timer = setTimeout(() => attempt(tries + 1), delay)
                return
              }
              release()
              observer.error(error)
            },
          })
        }
        attempt(1)
        return () => {
          done = true
          clearTimeout(timer)
          subscription?.unsubscribe()
          release()
        }
      })
    }
}

export const api = createTRPCClient<AppRouter>({
  links: [
    splitLink({
      condition: (op) => op.type === 'subscription',
      true: httpSubscriptionLink({ url, connectionParams: headers }),
      false: splitLink({
        condition: (op) => op.type === 'mutation',
        true: [
          idempotencyLink(),
          httpLink({
            url,
            headers: ({ op }) => {
              const key = op.context[KEY]
              return typeof key === 'string' ? { ...headers(), 'idempotency-key': key } : headers()
            },
          }),
        ],
        false: httpBatchLink({ url, headers, maxURLLength: 4000 }),
      }),
    }),
  ],
})

/** What went wrong with a call, for a person: status, message and the input problems by field. */
export interface Problem {
  /** The HTTP status (0 when the service could not be reached). */
  status: number
  message: string
  /** The 400's issues by dotted field path (`tools.0.uuid`); empty otherwise. */
  fields: Record<string, string>
  issues: ErrorIssue[]
  /** Seconds the service asked to wait (`Retry-After` of a 429 or 503); null or absent when it named none. */
  retryAfter?: number | null
}

/** Reads a failed call (a `TRPCClientError`, or a network failure) as a {@link Problem}. */
export function problemOf(error: unknown): Problem {
  if (error instanceof TRPCClientError) {
    const data = (error.data ?? {}) as { httpStatus?: number; issues?: ErrorIssue[] }
    const issues = Array.isArray(data.issues) ? data.issues : []
    const fields: Record<string, string> = {}
    for (const issue of issues) {
      const key = issue.path.map(String).join('.')
      fields[key] ??= issue.message
    }
    return { status: data.httpStatus ?? 0, message: error.message, fields, issues, retryAfter: retryAfterOf(error) }
  }
  return { status: 0, message: error instanceof Error ? error.message : String(error), fields: {}, issues: [], retryAfter: null }
}

/** True for a 401: the token expired or was revoked. */
export const isUnauthorized = (error: unknown) => problemOf(error).status === 401
