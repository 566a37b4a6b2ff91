/**
 * The console's only way to the service: tRPC's client typed by `AppRouter` (docs/api/clients.md).
 * Queries and mutations go over HTTP in batches to /trpc; subscriptions (a run's events) over
 * Server-Sent Events, which reconnect on their own and resume after the last event seen.
 * The bearer token and the chosen workspace travel as headers (as tRPC connectionParams on SSE,
 * where a browser cannot set headers).
 */
import { createTRPCClient, httpBatchLink, httpSubscriptionLink, splitLink, TRPCClientError } from '@trpc/client'
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

export const api = createTRPCClient<AppRouter>({
  links: [
    splitLink({
      condition: (op) => op.type === 'subscription',
      true: httpSubscriptionLink({ url, connectionParams: headers }),
      false: httpBatchLink({ url, headers, maxURLLength: 4000 }),
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
    return { status: data.httpStatus ?? 0, message: error.message, fields, issues }
  }
  return { status: 0, message: error instanceof Error ? error.message : String(error), fields: {}, issues: [] }
}

/** True for a 401: the token expired or was revoked. */
export const isUnauthorized = (error: unknown) => problemOf(error).status === 401
