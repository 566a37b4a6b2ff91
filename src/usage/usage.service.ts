/**
 * `GET usage` (docs/api/usage-and-budgets.md, "Usage"): the model usage of the request's
 * workspace, summed from the usage rollup (`usage_daily`) and grouped by one or two of day, week,
 * month, agent, user, model and access token. A run counts on the UTC day of its `created_at`.
 * Owners and admins see everyone's usage; a member sees their own only.
 */
import type { ResourceCtx } from '../context.ts'
import { Conditions } from '../access/list-filters.ts'
import { viewerOf } from '../access/resource-access.ts'
import { managesWorkspace } from '../access/visibility.ts'
import { dollars, type TUsageAnswer, type TUsageInput, type TUsageRow, type UsageGroup } from './usage.schema.ts'

/**
 * Per group: the key the rollup's rows are summed by (`inner`, over alias `u`), the columns the
 * answer shows for it (`outer`, over the sums `g` and the joined names), and its sort order. The
 * rows are summed by plain keys first and named after: formatting a date or joining a name per
 * rollup row costs more than the sum itself.
 */
const GROUPS: Record<UsageGroup, { inner: string; outer: string[]; order: string[] }> = {
  day: { inner: 'u.day as day', outer: [`to_char(g.day, 'YYYY-MM-DD') as date`], order: ['date'] },
  week: { inner: `date_trunc('week', u.day)::date as day`, outer: [`to_char(g.day, 'YYYY-MM-DD') as date`], order: ['date'] },
  month: { inner: `date_trunc('month', u.day)::date as day`, outer: [`to_char(g.day, 'YYYY-MM-DD') as date`], order: ['date'] },
  agent: {
    inner: 'u.agent_id',
    outer: ['a.uuid as "agentUuid"', 'a.name as "agentName"'],
    order: ['"agentName" nulls last', '"agentUuid" nulls last'],
  },
  user: {
    inner: 'u.user_id',
    outer: ['us.id as "userId"', 'us.name as "userName"'],
    order: ['"userName" nulls last', '"userId" nulls last'],
  },
  model: { inner: 'u.model', outer: [`nullif(g.model, '') as model`], order: ['model nulls last'] },
  access_token: {
    inner: 'u.access_token_id',
    outer: ['tk.uuid as "tokenUuid"', 'tk.name as "tokenName"'],
    order: ['"tokenName" nulls last', '"tokenUuid" nulls last'],
  },
}

interface GroupRow {
  date?: string
  agentUuid?: string | null
  agentName?: string | null
  userId?: number | null
  userName?: string | null
  model?: string | null
  tokenUuid?: string | null
  tokenName?: string | null
  runs: number
  prompt_tokens: number
  completion_tokens: number
  total_tokens: number
  cost: string
}

/** The usage of the workspace (the caller's own for a member), grouped and summed. */
export async function usage(ctx: ResourceCtx, input: TUsageInput): Promise<TUsageAnswer> {
  const groups = input.group_by ?? ['day']
  const where = new Conditions({ sql: 'u.workspace_id = ?', params: [ctx.workspace.workspace.id] })
  if (input.date_from) where.add('u.day >= ?::date', input.date_from)
  if (input.date_to) where.add('u.day <= ?::date', input.date_to)
  if (input.agent_uuid) where.add('u.agent_id = (select id from agents where uuid = ? and workspace_id = u.workspace_id)', input.agent_uuid)
  if (input.user_id !== undefined) where.add('u.user_id = ?', input.user_id)
  if (input.model) where.add('u.model = ?', input.model)
  if (!managesWorkspace(viewerOf(ctx))) where.add('u.user_id = ?', ctx.auth.user.id)
  const filter = where.toSql()
  const inner = groups.map((group) => GROUPS[group].inner)
  const outer = groups.flatMap((group) => GROUPS[group].outer)
  // Ids with no row (0 for none, or a row deleted since) are named null, and merge into one group.
  const rows = await ctx.em.execute<GroupRow[]>(
    `with g as (
       select ${inner.join(', ')}, sum(u.runs) as runs, sum(u.prompt_tokens) as prompt_tokens, sum(u.completion_tokens) as completion_tokens,
         sum(u.total_tokens) as total_tokens, sum(u.cost) as cost
       from usage_daily u
       where ${filter.sql}
       group by ${inner.map((_, index) => index + 1).join(', ')})
     select ${outer.join(', ')}, sum(g.runs)::float8 as runs, sum(g.prompt_tokens)::float8 as prompt_tokens,
       sum(g.completion_tokens)::float8 as completion_tokens, sum(g.total_tokens)::float8 as total_tokens, sum(g.cost)::text as cost
     from g
       ${groups.includes('agent') ? 'left join agents a on a.id = g.agent_id' : ''}
       ${groups.includes('user') ? 'left join users us on us.id = g.user_id' : ''}
       ${groups.includes('access_token') ? 'left join access_tokens tk on tk.id = g.access_token_id' : ''}
     group by ${outer.map((_, index) => index + 1).join(', ')}
     having sum(g.runs) > 0 or sum(g.total_tokens) > 0 or sum(g.cost) > 0
     order by ${groups.flatMap((group) => GROUPS[group].order).join(', ')}`,
    filter.params,
  )
  const data = rows.map((row) => toUsageRow(row, groups))
  const totals = { runs: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost: 0 }
  for (const row of data) {
    totals.runs += row.runs
    totals.prompt_tokens += row.prompt_tokens
    totals.completion_tokens += row.completion_tokens
    totals.total_tokens += row.total_tokens
    totals.cost += row.cost
  }
  totals.cost = dollars(totals.cost)
  return { data, meta: { totals, currency: 'USD' } }
}

/** A group row as the wire shape: the keys asked for, then the sums. */
function toUsageRow(row: GroupRow, groups: UsageGroup[]): TUsageRow {
  const out: TUsageRow = { runs: 0, prompt_tokens: 0, completion_tokens: 0, total_tokens: 0, cost: 0 }
  const keyed: Partial<TUsageRow> = {}
  for (const group of groups) {
    if (group === 'day' || group === 'week' || group === 'month') keyed.date = row.date
    if (group === 'agent') keyed.agent = row.agentUuid ? { uuid: row.agentUuid, name: row.agentName ?? '' } : null
    if (group === 'user')
      keyed.user = row.userId !== null && row.userId !== undefined ? { id: Number(row.userId), name: row.userName ?? '' } : null
    if (group === 'model') keyed.model = row.model ?? null
    if (group === 'access_token') keyed.access_token = row.tokenUuid ? { uuid: row.tokenUuid, name: row.tokenName ?? '' } : null
  }
  return {
    ...keyed,
    ...out,
    runs: Number(row.runs),
    prompt_tokens: Number(row.prompt_tokens),
    completion_tokens: Number(row.completion_tokens),
    total_tokens: Number(row.total_tokens),
    cost: dollars(row.cost),
  }
}
