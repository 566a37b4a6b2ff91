/**
 * The audit capability's public surface (docs/api/audit.md): reading the log and its retention.
 * Services record events through src/access/audit.ts, in the transactions of their changes.
 */
export {
  AuditEvent,
  AuditEventExportInput,
  AuditEventListInput,
  AuditEventPathInput,
  type TAuditEvent,
  type TAuditEventExportInput,
} from './audit.schema.ts'
export * as auditEvents from './audit.service.ts'
export { AuditRetention } from './retention.ts'
