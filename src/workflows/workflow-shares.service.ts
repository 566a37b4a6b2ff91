/**
 * `POST /api/v1/workflows/{workflow_uuid}/share` (docs/api/tenancy.md and docs/api/resources.md):
 * the agents' share rules (src/access/shares.ts) applied to a workflow.
 */
import { requireResource } from '../access/resource-access.ts'
import type { TShareWorkflowInput, TWorkflow } from './workflow.schema.ts'
import { shareResource } from '../access/shares.ts'
import { loadWorkflow } from './workflows.query.ts'
import type { ResourceCtx } from '../context.ts'

/**
 * Sets (or, with `permission: null`, removes) the share of a workflow with a user (`entity_id`
 * a user id of the caller's service scope) or a workspace (`entity_id` the uuid of a workspace
 * the caller belongs to); answers `{data: Workflow}` as a retrieve does. Needs `admin`.
 * @throws NotFoundError (not visible), ForbiddenError (visible without `admin`), ValidationError
 *   naming `entity_id` for an unknown user, the workflow's owner, or a workspace the caller is
 *   not a member of.
 */
export async function shareWorkflow(ctx: ResourceCtx, input: TShareWorkflowInput): Promise<{ data: TWorkflow }> {
  const access = await requireResource(ctx, 'workflows', 'Workflow', input.workflow_uuid, 'admin')
  await shareResource(ctx, 'workflows', access, input)
  return { data: await loadWorkflow(ctx, access.id) }
}
