/**
 * Reading workflows into the Workflow shape (src/workflows/workflow.schema.ts): one query for the
 * rows (owner and workspace joined when wanted, `is_favorite` as a sub-select) and one for their
 * categories, whatever the number of rows.
 */
import type { TCategory } from '../access/resource.schema.ts'
import { toNestedUser, toWorkspaceBase, type UserRow, type WorkspaceRow } from '../access/user-workspace.schema.ts'
import { toWorkflowBase, WORKFLOW_FIELDS, type TListWorkflowsInput, type TWorkflow, type WorkflowRow } from './workflow.schema.ts'
import { sortOf } from '../access/wire.ts'
import { categoriesOf } from '../access/categories.ts'
import { resourceFilterSql } from '../access/list-filters.ts'
import { nameAndTimeSorts } from '../access/list-page.ts'
import { selectColumns, unprefix, userColumns, workspaceColumns } from '../platform/sql.ts'
import type { ResourceCtx } from '../context.ts'
import { favoriteSql } from '../access/visibility.ts'

/** What to embed besides the specification's fields. */
interface WorkflowEmbeds {
  user: boolean
  workspace: boolean
  categories: boolean
}

/** Single responses embed everything (docs/api/conventions.md). */
const EMBED_ALL: WorkflowEmbeds = { user: true, workspace: true, categories: true }

const SORT_COLUMNS = nameAndTimeSorts('w')

/** The select list and joins of a workflow read; `is_favorite` is the caller's. */
function selectSql(ctx: ResourceCtx, embeds: WorkflowEmbeds): { columns: string; joins: string; params: unknown[] } {
  const favorite = favoriteSql('w', 'workflows', ctx.auth.user.id)
  const columns = [
    selectColumns('w', 'w_', WORKFLOW_FIELDS),
    `${favorite.sql} as "isFavorite"`,
    `w.webhook_token as "webhookToken"`,
    `(w.webhook_secret_ciphertext is not null) as "hasWebhookSecret"`,
    ...(embeds.user ? [userColumns('u', 'u_')] : []),
    ...(embeds.workspace ? [workspaceColumns('ws', 'ws_')] : []),
  ].join(', ')
  const joins = [
    ...(embeds.user ? ['join users u on u.id = w.user_id'] : []),
    ...(embeds.workspace ? ['join workspaces ws on ws.id = w.workspace_id'] : []),
  ].join(' ')
  return { columns, joins, params: favorite.params }
}

/** Joined rows -> the Workflow shape; `categories` only when embedded. */
function toWorkflows(
  ctx: ResourceCtx,
  rows: Record<string, unknown>[],
  embeds: WorkflowEmbeds,
  categories: Map<number, TCategory[]> | null,
): TWorkflow[] {
  const { appUrl } = ctx.config
  const viewerId = ctx.auth.user.id
  const adminOf = ['owner', 'admin'].includes(ctx.workspace.role) ? ctx.workspace.workspace.id : null
  return rows.map((raw) => {
    const row = unprefix<WorkflowRow>(raw, 'w_')
    const id = Number(row.id)
    const user = embeds.user ? toNestedUser(unprefix<UserRow>(raw, 'u_'), appUrl) : null
    const workspace = embeds.workspace ? { ...toWorkspaceBase(unprefix<WorkspaceRow>(raw, 'ws_'), viewerId, appUrl), user: null } : null
    return {
      ...toWorkflowBase(row, viewerId, appUrl),
      ...(categories ? { categories: categories.get(id) ?? [] } : {}),
      is_favorite: raw.isFavorite === true,
      user,
      workspace,
      // The token is the webhook's secret: only those who manage the workflow see it.
      webhook_url:
        row.userId === viewerId || Number(row.workspaceId) === adminOf ? `${appUrl}/api/v1/hooks/${String(raw.webhookToken)}` : null,
      has_webhook_secret: raw.hasWebhookSecret === true,
    }
  })
}

/** One live workflow by id with every embed (the caller already passed `requireResource`). */
export async function loadWorkflow(ctx: ResourceCtx, id: number): Promise<TWorkflow> {
  const select = selectSql(ctx, EMBED_ALL)
  const [rows, categories] = await Promise.all([
    ctx.em.execute(`select ${select.columns} from workflows w ${select.joins} where w.id = ?`, [...select.params, id]),
    categoriesOf(ctx.em, 'workflows', [id]),
  ])
  return toWorkflows(ctx, rows, EMBED_ALL, categories)[0]
}

/**
 * One page of workflows and the total: the page query, the count and, with
 * `with=categories`, one categories query over the page's ids. Three queries at most.
 */
export async function listWorkflows(ctx: ResourceCtx, input: TListWorkflowsInput): Promise<{ items: TWorkflow[]; total: number }> {
  const embeds: WorkflowEmbeds = {
    user: input.with?.includes('user') ?? false,
    workspace: input.with?.includes('workspace') ?? false,
    categories: input.with?.includes('categories') ?? false,
  }
  const where = resourceFilterSql('w', 'workflows', ctx, input)
  const select = selectSql(ctx, embeds)
  const { column, direction } = sortOf(input.sort)
  const [rows, [count]] = await Promise.all([
    ctx.em.execute(
      `select ${select.columns} from workflows w ${select.joins} where ${where.sql}
       order by ${SORT_COLUMNS[column]} ${direction}, w.id ${direction}
       limit ${input.per_page} offset ${(input.page - 1) * input.per_page}`,
      [...select.params, ...where.params],
    ),
    ctx.em.execute(`select count(*)::int as total from workflows w where ${where.sql}`, where.params),
  ])
  const categories = embeds.categories
    ? await categoriesOf(
        ctx.em,
        'workflows',
        rows.map((row) => Number(row.w_id)),
      )
    : null
  return { items: toWorkflows(ctx, rows, embeds, categories), total: Number(count.total) }
}
