/**
 * Recording the audit log (docs/api/audit.md): every change a caller makes is recorded by the
 * transaction that makes it, so an event exists exactly when its change committed (no change
 * without its record, no record without its change); a record that cannot be written rolls the
 * change back with it. Recording knows nothing of who reads the log (src/audit/).
 *
 * The request supplies the actor (user, token kind and uuid, or the trusted service), the request
 * id, the address and the user agent; the service that makes the change supplies the action, the
 * resource and the fields it changed. Values of secret fields never reach the log: they are
 * replaced by `"[redacted]"` here, whatever the caller passes.
 */
import { uuidv7 } from 'uuidv7'
import type { Em } from './db.ts'

/** What stands in for a secret value in `changes`. */
export const REDACTED = '[redacted]'

/**
 * Field names whose values are secrets (matched against the whole name or its last words, once
 * camelCase and hyphens are read as `_`: `apiKey`, `x-api-key` and `api_key` alike): passwords,
 * tokens, keys, secrets, credentials, cookies.
 */
const SECRET_FIELD =
  /(^|_)(password|password_hash|token|access_token|refresh_token|secret|client_secret|api_key|private_key|secret_key|credentials?|token_hash|ciphertext|authorization|cookie|set_cookie)$/i

/** True when a field of that name holds a secret (docs/api/audit.md, "Redaction"). */
export const isSecretField = (field: string): boolean =>
  SECRET_FIELD.test(field.replace(/([a-z0-9])([A-Z])/g, '$1_$2').replaceAll('-', '_').toLowerCase())

/** One field's change: its value before and after (`null` for absent). */
export interface FieldChange {
  from: unknown
  to: unknown
}

/** The field changes of an event: field name to its change. */
export type Changes = Record<string, FieldChange>

/** Who made the change, as the request knows them. */
export interface AuditActor {
  /** `user` for a signed-in caller, `service` for a trusted service without a user, `system` for the service itself. */
  type: 'user' | 'service' | 'system'
  userId: number | null
  tokenKind: 'basic' | 'application' | null
  tokenUuid: string | null
  serviceId: string | null
}

/** The request around a change: its actor and where it came from (all null for the system). */
export interface AuditRequest {
  actor: AuditActor
  requestId: string | null
  ip: string | null
  userAgent: string | null
}

/** The system as actor: key rotation, sweeps and other work nobody asked for over HTTP. */
export const SYSTEM_REQUEST: AuditRequest = {
  actor: { type: 'system', userId: null, tokenKind: null, tokenUuid: null, serviceId: null },
  requestId: null,
  ip: null,
  userAgent: null,
}

/** The change an event records. */
export interface AuditEntry {
  /** `resource.verb`: `agent.update`, `member.add`, `auth.sign_in`. */
  action: string
  /** The workspace the event belongs to (the request's workspace context); null for none. */
  workspaceId: number | null
  /** What was changed: its type (`agent`), and its uuid or, for a resource without one, its id. */
  resource?: { type: string; uuid?: string | null; id?: number | null } | null
  /** The fields that changed; secret values are redacted here. */
  changes?: Changes | null
}

/** Longest user agent kept (characters). */
const USER_AGENT_MAX = 512

/**
 * The changed fields between `before` and `after`, over `fields` (default: every key of
 * `after`); fields whose values are equal as JSON are left out, secret fields are redacted.
 * Answers null when nothing changed.
 */
export function fieldChanges(
  before: Record<string, unknown> | null,
  after: Record<string, unknown> | null,
  fields: readonly string[] = Object.keys(after ?? before ?? {}),
): Changes | null {
  const changes: Changes = {}
  for (const field of fields) {
    const from = before?.[field] ?? null
    const to = after?.[field] ?? null
    if (JSON.stringify(from) === JSON.stringify(to)) continue
    changes[field] = { from, to }
  }
  return Object.keys(changes).length > 0 ? changes : null
}

/** `changes` with every secret field's values replaced by {@link REDACTED}, nested objects included. */
export function redactChanges(changes: Changes): Changes {
  const redacted: Changes = {}
  for (const [field, change] of Object.entries(changes)) {
    redacted[field] = isSecretField(field)
      ? { from: change.from === null ? null : REDACTED, to: change.to === null ? null : REDACTED }
      : { from: redactValue(change.from), to: redactValue(change.to) }
  }
  return redacted
}

/** A value with every secret-named key inside it redacted (arrays and objects walked). */
function redactValue(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(redactValue)
  if (value === null || typeof value !== 'object' || value instanceof Date) return value
  return Object.fromEntries(
    Object.entries(value as Record<string, unknown>).map(([key, inner]) => [
      key,
      isSecretField(key) && inner !== null ? REDACTED : redactValue(inner),
    ]),
  )
}

/**
 * Records `entry` with `em`, which must be the change's transaction: a record outside one could
 * outlive a change that rolled back, or go missing after one that committed.
 * @param standalone true only for an event that changes nothing else (a failed sign-in): it is
 *   then its own transaction.
 * @throws Error when `em` is not in a transaction (a defect of the caller), or the insert's error
 *   (which rolls the change back).
 */
export async function recordAudit(em: Em, request: AuditRequest, entry: AuditEntry, standalone = false): Promise<void> {
  if (!standalone && !em.isInTransaction()) {
    throw new Error(`The audit event ${entry.action} must be recorded in the transaction of its change`)
  }
  const { actor } = request
  await em.execute(
    `insert into audit_events (uuid, occurred_at, action, actor_type, actor_user_id, token_kind, token_uuid, service_id, workspace_id,
       resource_type, resource_uuid, resource_id, request_id, ip, user_agent, changes)
     values (?, now(), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?::jsonb)`,
    [
      uuidv7(),
      entry.action,
      actor.type,
      actor.userId,
      actor.tokenKind,
      actor.tokenUuid,
      actor.serviceId,
      entry.workspaceId,
      entry.resource?.type ?? null,
      entry.resource?.uuid ?? null,
      entry.resource?.id ?? null,
      request.requestId,
      request.ip,
      request.userAgent?.slice(0, USER_AGENT_MAX) ?? null,
      entry.changes ? JSON.stringify(redactChanges(entry.changes)) : null,
    ],
  )
}
