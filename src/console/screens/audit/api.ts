/**
 * The audit log's data (docs/api/audit.md): a page of the workspace's events, newest first, with
 * the list's filters (`auditEvents.list`), one event (`auditEvents.retrieve`), and the export of
 * every event matching the same filters (`GET /api/v1/audit-events/export`). The export is a
 * plain REST route answering NDJSON, not a procedure (a procedure answers one JSON document), so
 * it is the one call here made with `fetch`, carrying the same bearer token and workspace as the
 * tRPC client; its errors are read into the same {@link Problem} as a procedure's.
 */
import { keepPreviousData, useMutation, useQuery } from '@tanstack/react-query'
import { credentials, type Problem, type RouterInputs, type RouterOutputs } from '../../lib/api.ts'
import { useTRPC, type TRPC } from '../../lib/trpc.ts'

export type AuditListInput = Exclude<RouterInputs['auditEvents']['list'], void | undefined>
export type AuditEvent = RouterOutputs['auditEvents']['list']['data'][number]
/** The filters the list and the export share. */
export type AuditFilters = Omit<AuditListInput, 'page' | 'per_page' | 'workspace_uuid'>

/** A page of events; the previous page stays shown while the next loads. */
export const auditEventsQueryOptions = (trpc: TRPC, input: AuditListInput) =>
  trpc.auditEvents.list.queryOptions(input, { placeholderData: keepPreviousData })

export function useAuditEvents(input: AuditListInput) {
  return useQuery(auditEventsQueryOptions(useTRPC(), input))
}

/** One event: events never change, so it is read once. */
export const auditEventQueryOptions = (trpc: TRPC, eventUuid: string) =>
  trpc.auditEvents.retrieve.queryOptions({ audit_event_uuid: eventUuid }, { staleTime: Infinity })

export function useAuditEvent(eventUuid: string) {
  return useQuery(auditEventQueryOptions(useTRPC(), eventUuid))
}

/** A refused or failed export, carrying the service's answer as a {@link Problem}. */
export class ExportError extends Error {
  constructor(readonly problem: Problem) {
    super(problem.message)
  }
}

/** A failed export as a {@link Problem}: the route answers the API's usual JSON error bodies. */
async function exportProblem(response: Response): Promise<Problem> {
  const body = (await response.json().catch(() => null)) as { message?: string; issues?: Problem['issues'] } | null
  const issues = Array.isArray(body?.issues) ? body.issues : []
  const fields: Record<string, string> = {}
  for (const issue of issues) fields[issue.path.map(String).join('.')] ??= issue.message
  return { status: response.status, message: body?.message ?? response.statusText, fields, issues, retryAfter: null }
}

/**
 * Every event matching `filters` as NDJSON (one event a line, newest first).
 * @throws ExportError with the service's refusal, or status 0 when it could not be reached.
 */
export async function exportAuditEvents(filters: AuditFilters): Promise<Blob> {
  const query = new URLSearchParams()
  for (const [key, value] of Object.entries(filters)) if (value !== undefined && value !== '') query.set(key, String(value))
  const headers: Record<string, string> = { accept: 'application/x-ndjson' }
  if (credentials.token) headers.authorization = `Bearer ${credentials.token}`
  if (credentials.workspace) headers['x-workspace-uuid'] = credentials.workspace
  let response: Response
  try {
    response = await fetch(`${location.origin}/api/v1/audit-events/export?${query.toString()}`, { headers })
  } catch (error) {
    throw new ExportError({
      status: 0,
      message: error instanceof Error ? error.message : String(error),
      fields: {},
      issues: [],
      retryAfter: null,
    })
  }
  if (!response.ok) throw new ExportError(await exportProblem(response))
  return response.blob()
}

/** Exports the events matching the filters it is given; the screen saves the answer as a file. */
export function useExportAuditEvents() {
  return useMutation({ mutationFn: exportAuditEvents })
}
