/**
 * Inputs and outputs of the audit log's operations (docs/api/audit.md). Inputs are strict
 * objects, so an unknown field is a 400 naming it.
 */
import { z } from 'zod'
import { iso, pageQuery, text, timestamp } from '../access/wire.ts'
import { UserSummary } from '../access/user-workspace.schema.ts'
import { DateOnly, dateOrderRule } from '../metrics/index.ts'

/** `action`: an action (`agent.update`), or a prefix of actions ending in `.*` (`agent.*`). */
const ActionFilter = text(100, 1).regex(/^[a-z_]+(\.[a-z_]+)*(\.\*)?$/, 'must be an action (agent.update) or a prefix ending in .* (agent.*)')

/** The filters of the list and of the export. */
const filters = {
  action: ActionFilter.optional(),
  actor_user_id: z.number().int().min(1).max(Number.MAX_SAFE_INTEGER).optional(),
  resource_type: text(64, 1)
    .regex(/^[a-z_]+$/, 'must be a resource type (agent, member, access_token)')
    .optional(),
  resource_uuid: z.uuid().optional(),
  date_from: DateOnly.optional(),
  date_to: DateOnly.optional(),
  workspace_uuid: z.uuid().optional(),
}

/** `GET /api/v1/audit-events`: paginator, newest first, with the filters. */
export const AuditEventListInput = z.strictObject({ ...pageQuery, ...filters }).superRefine(dateOrderRule)
export type TAuditEventListInput = z.infer<typeof AuditEventListInput>

/** `GET /api/v1/audit-events/export`: the filters, no pages. */
export const AuditEventExportInput = z.strictObject(filters).superRefine(dateOrderRule)
export type TAuditEventExportInput = z.infer<typeof AuditEventExportInput>

/** `GET /api/v1/audit-events/{audit_event_uuid}`. */
export const AuditEventPathInput = z.strictObject({ audit_event_uuid: z.uuid(), workspace_uuid: z.uuid().optional() })

/** The Audit event shape (docs/api/audit.md). */
export const AuditEvent = z
  .object({
    uuid: z.uuid(),
    occurred_at: timestamp(),
    action: z.string(),
    actor: z.object({
      type: z.enum(['user', 'service', 'system']),
      user: UserSummary.nullable(),
      token_kind: z.enum(['basic', 'application']).nullable(),
      token_uuid: z.uuid().nullable(),
    }),
    workspace_uuid: z.uuid().nullable(),
    resource: z.object({ type: z.string(), uuid: z.uuid().nullable(), id: z.number().int().nullable() }).nullable(),
    request_id: z.string().nullable(),
    ip: z.string().nullable(),
    user_agent: z.string().nullable(),
    changes: z.record(z.string(), z.object({ from: z.unknown(), to: z.unknown() })).nullable(),
  })
  .meta({ id: 'AuditEvent' })
export type TAuditEvent = z.infer<typeof AuditEvent>

/** The columns an event is read with (alias `a`, its actor `u`, its workspace `w`). */
export const AUDIT_COLUMNS = `a.uuid, a.occurred_at as "occurredAt", a.action, a.actor_type as "actorType", a.actor_user_id::float8 as "actorUserId",
  u.name as "actorName", a.token_kind as "tokenKind", a.token_uuid as "tokenUuid", w.uuid as "workspaceUuid",
  a.resource_type as "resourceType", a.resource_uuid as "resourceUuid", a.resource_id::float8 as "resourceId",
  a.request_id as "requestId", a.ip, a.user_agent as "userAgent", a.changes`

/** The FROM of {@link AUDIT_COLUMNS}. */
export const AUDIT_FROM = 'audit_events a left join users u on u.id = a.actor_user_id left join workspaces w on w.id = a.workspace_id'

/** A row of {@link AUDIT_COLUMNS}. */
export interface AuditRow {
  uuid: string
  occurredAt: Date | string
  action: string
  actorType: 'user' | 'service' | 'system'
  actorUserId: number | null
  actorName: string | null
  tokenKind: 'basic' | 'application' | null
  tokenUuid: string | null
  workspaceUuid: string | null
  resourceType: string | null
  resourceUuid: string | null
  resourceId: number | null
  requestId: string | null
  ip: string | null
  userAgent: string | null
  changes: unknown
}

/** The wire shape of a row. */
export function toAuditEvent(row: AuditRow): TAuditEvent {
  const changes = typeof row.changes === 'string' ? (JSON.parse(row.changes) as TAuditEvent['changes']) : (row.changes as TAuditEvent['changes'])
  return {
    uuid: row.uuid,
    occurred_at: iso(row.occurredAt),
    action: row.action,
    actor: {
      type: row.actorType,
      user: row.actorUserId === null ? null : { id: Number(row.actorUserId), name: row.actorName ?? '' },
      token_kind: row.tokenKind,
      token_uuid: row.tokenUuid,
    },
    workspace_uuid: row.workspaceUuid,
    resource: row.resourceType === null ? null : { type: row.resourceType, uuid: row.resourceUuid, id: row.resourceId === null ? null : Number(row.resourceId) },
    request_id: row.requestId,
    ip: row.ip,
    user_agent: row.userAgent,
    changes: changes ?? null,
  }
}
