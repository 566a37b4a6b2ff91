/**
 * Wire inputs of the approvals API (docs/api/runs.md, "Approvals"); the Approval shape itself is
 * in ./run.schema.ts, where the Run embeds it.
 */
import { z } from 'zod'
import { APPROVAL_STATUSES } from '../../entities/index.ts'
import { pageQuery, sortParam, text } from '../access/wire.ts'
import { StorableObject } from '../access/resource.schema.ts'

/** Longest reason a person gives for a decision, in characters. */
export const REASON_MAX = 2_000

/** `GET /api/v1/approvals` query: the paginator's, newest first, and the filters. */
export const ApprovalListInput = z
  .strictObject({
    ...pageQuery,
    sort: sortParam(['created_at', '-created_at'], '-created_at'),
    status: z.enum(APPROVAL_STATUSES).optional(),
    agent_uuid: z.uuid().optional(),
    run_uuid: z.uuid().optional(),
    workspace_uuid: z.uuid().optional(),
  })
  .prefault({})
export type TApprovalListInput = z.infer<typeof ApprovalListInput>

/** `{approval_uuid}` of the approval paths. */
export const ApprovalPathInput = z.strictObject({ approval_uuid: z.uuid(), workspace_uuid: z.uuid().optional() })

/** `POST approvals/{x}/approve`: edited `arguments` (checked against the tool's input schema) and a reason. */
export const ApproveInput = z.strictObject({
  approval_uuid: z.uuid(),
  workspace_uuid: z.uuid().optional(),
  /** JSON the run can store (depth and size bounded as every stored object); then checked against the tool's input schema. */
  arguments: StorableObject().optional(),
  reason: text(REASON_MAX).optional(),
})

/** `POST approvals/{x}/deny`: a reason, which the model reads. */
export const DenyInput = z.strictObject({
  approval_uuid: z.uuid(),
  workspace_uuid: z.uuid().optional(),
  reason: text(REASON_MAX).optional(),
})

/** What a decision carries. */
export type TApprovalDecision = { arguments?: Record<string, unknown>; reason?: string }
