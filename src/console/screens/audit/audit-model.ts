/**
 * An audit event's parties in words, for the list and the opened event: who acted (a user by
 * name, or the service) and what was changed (a resource by uuid, or by id when it has none).
 */
import type { AuditEvent } from './api.ts'

/** The acting party: the user's name as it is now, or who else acted. */
export function actorWords(actor: AuditEvent['actor']): string {
  if (actor.user) return actor.user.name
  if (actor.type === 'system') return 'The service itself'
  if (actor.type === 'service') return 'A trusted service'
  return 'No user'
}

/** The resource: `agent 0193…`, `member #12`, or "None". */
export function resourceWords(resource: AuditEvent['resource']): string {
  if (!resource) return 'None'
  if (resource.uuid) return `${resource.type} ${resource.uuid}`
  if (resource.id !== null) return `${resource.type} #${resource.id}`
  return resource.type
}
