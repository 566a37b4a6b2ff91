/**
 * The audit log (docs/api/audit.md): the workspace's events, read by its owners and admins. No
 * procedure changes or deletes an event. The NDJSON export, `GET /api/v1/audit-events/export`,
 * is a plain route (src/http/audit-export.routes.ts): a procedure answers one JSON document.
 */
import { AuditEvent, AuditEventListInput, AuditEventPathInput, auditEvents } from '../src/audit/index.ts'
import { envelope, paginated } from '../src/access/wire.ts'
import { router, workspaceProcedure } from '../src/trpc/init.ts'

const tags = ['Audit']

export const auditRouter = router({
  list: workspaceProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/v1/audit-events', tags, summary: "The workspace's audit events, newest first", protect: true },
      errorStatuses: [403],
    })
    .input(AuditEventListInput)
    .output(paginated(AuditEvent))
    .query(({ ctx, input }) => auditEvents.list(ctx, input)),

  retrieve: workspaceProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/v1/audit-events/{audit_event_uuid}', tags, summary: 'Retrieve an audit event', protect: true },
      errorStatuses: [403],
    })
    .input(AuditEventPathInput)
    .output(envelope(AuditEvent))
    .query(({ ctx, input }) => auditEvents.retrieve(ctx, input.audit_event_uuid)),
})
