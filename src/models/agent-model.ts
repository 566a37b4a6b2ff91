/**
 * Which model an agent's work uses for the caller (src/models/registry.ts): runs, thread names and
 * knowledge searches resolve it the same way, with the same errors.
 */
import { resolveModel, resolveReadModel, type ResolvedModel } from './registry.ts'
import type { FieldPath } from '../platform/errors.ts'
import type { ResourceCtx } from '../context.ts'

/** The model `slug` (null: the default) for the caller in the request's workspace (src/models/registry.ts). */
export function resolveFor(ctx: ResourceCtx, slug: string | null, field: FieldPath): Promise<ResolvedModel> {
  return resolveModel(
    { em: ctx.em, config: ctx.config },
    { workspaceId: ctx.workspace.workspace.id, userId: ctx.auth.user.id, slug, field },
  )
}

/**
 * An agent's model: its `metadata.large_language_model`, else the default. Errors name
 * `metadata.large_language_model` (runs and thread names alike).
 * @param read the model as the agent's statement read it (src/runs/runs.service.ts, `requireAgent`); without it, it is looked up.
 * @throws ValidationError for an unknown model or one without a credential.
 */
export function resolveAgentModel(ctx: ResourceCtx, metadata: Record<string, unknown>, read?: { modelRow: unknown }): Promise<ResolvedModel> {
  const named = metadata.large_language_model
  const slug = typeof named === 'string' && named ? named : null
  const field: FieldPath = ['metadata', 'large_language_model']
  if (!read) return resolveFor(ctx, slug, field)
  const deps = { em: ctx.em, config: ctx.config }
  return resolveReadModel(deps, { workspaceId: ctx.workspace.workspace.id, userId: ctx.auth.user.id, slug, field }, read.modelRow)
}
