/**
 * Approvals of tool calls (docs/api/runs.md, "Approvals"): `GET approvals`, `GET approvals/{x}`,
 * `POST approvals/{x}/approve` and `POST approvals/{x}/deny`.
 */
import { approvals, Approval, ApprovalListInput, ApprovalPathInput, ApproveInput, DenyInput } from '../src/runs/index.ts'
import { envelope, paginated } from '../src/access/wire.ts'
import { router, workspaceProcedure } from '../src/trpc/init.ts'

const tags = ['Approvals']
const ApprovalEnvelope = envelope(Approval)

export const approvalsRouter = router({
  list: workspaceProcedure
    .meta({
      openapi: { method: 'GET', path: '/api/v1/approvals', tags, summary: "Approvals of the caller's runs (every run's for a workspace owner or admin), newest first", protect: true },
    })
    .input(ApprovalListInput)
    .output(paginated(Approval))
    .query(({ ctx, input }) => approvals.list(ctx, input)),

  retrieve: workspaceProcedure
    .meta({ openapi: { method: 'GET', path: '/api/v1/approvals/{approval_uuid}', tags, summary: 'Retrieve an approval', protect: true } })
    .input(ApprovalPathInput)
    .output(ApprovalEnvelope)
    .query(async ({ ctx, input }) => ({ data: await approvals.retrieve(ctx, input.approval_uuid) })),

  approve: workspaceProcedure
    .meta({
      openapi: {
        method: 'POST',
        path: '/api/v1/approvals/{approval_uuid}/approve',
        tags,
        summary: 'Approve a pending tool call, optionally with edited arguments (409 once decided)',
        protect: true,
      },
    })
    .input(ApproveInput)
    .output(ApprovalEnvelope)
    .mutation(async ({ ctx, input }) => ({ data: await approvals.decide(ctx, input.approval_uuid, true, input) })),

  deny: workspaceProcedure
    .meta({
      openapi: { method: 'POST', path: '/api/v1/approvals/{approval_uuid}/deny', tags, summary: 'Deny a pending tool call (409 once decided)', protect: true },
    })
    .input(DenyInput)
    .output(ApprovalEnvelope)
    .mutation(async ({ ctx, input }) => ({ data: await approvals.decide(ctx, input.approval_uuid, false, input) })),
})
