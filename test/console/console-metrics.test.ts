/**
 * The console's metrics screen in a real browser (docs/api/metrics.md): data made over REST (two
 * agents, a thread of two runs against the local model server, a workflow execution), then the
 * screen's workspace summary against `GET /api/v1/workspaces/{uuid}/metrics`, and its table
 * against `POST /api/v1/<resource>/metrics` with the same parameters while the endpoint, the
 * calculation, the granularity, the column and the filters are switched; an empty answer, a
 * refused date range shown at its field, and the screen at 360 px.
 */
import type { Page } from 'playwright-core'
import { beforeAll, expect, it } from 'vitest'
import { describeConsole, type ConsoleSuite, type ConsoleUser } from '../helpers/console.ts'

/** One row of the screen's table: the period's first day (series) and its numbers. */
interface Row {
  date: string | null
  value: number | null
  count?: number | null
}

/** A shown number back to a number: "1,234" is 1234, "—" (no value) is null. */
const parseShown = (text: string): number | null => (text.trim() === '—' ? null : Number(text.replace(/,/g, '').trim()))

/** The rows (and the total of a series) that the metrics table shows. */
async function readTable(page: Page): Promise<{ rows: Row[]; total: number | null | undefined }> {
  const table = page.getByRole('table', { name: 'Metric values' })
  const rows: { date: string | null; cells: string[] }[] = []
  for (const tr of await table.locator('tbody tr').all()) {
    const time = tr.locator('time')
    rows.push({ date: (await time.count()) ? await time.getAttribute('datetime') : null, cells: await tr.locator('td').allTextContents() })
  }
  const foot = await table.locator('tfoot td').allTextContents()
  return {
    rows: rows.map(({ date, cells }) => ({ date, value: parseShown(cells[0]!), ...(cells.length > 1 ? { count: parseShown(cells[1]!) } : {}) })),
    total: foot.length ? parseShown(foot[0]!) : undefined,
  }
}

/** What the REST answer says the table should show. */
function expectedTable(answer: { total: number | null; data: { date?: string; value: number | null; count?: number }[] }, series: boolean) {
  return {
    rows: answer.data.map((point) => ({ date: point.date ?? null, value: point.value, ...(point.count !== undefined ? { count: point.count } : {}) })),
    total: series ? answer.total : undefined,
  }
}

async function choose(page: Page, label: string, option: string) {
  await page.getByRole('combobox', { name: label }).click()
  await page.getByRole('option', { name: option, exact: true }).click()
}

describeConsole('web console: metrics', (t: ConsoleSuite) => {
  let user: ConsoleUser
  let helper: string
  let quiet: string

  /** The metrics endpoint's answer over REST. */
  const rest = async (segment: string, body: Record<string, unknown>) => {
    const res = await t.server.http('POST', `/api/v1/${segment}/metrics`, { token: user.token, body })
    expect(res.status).toBe(200)
    return res.body as { total: number | null; data: { date?: string; value: number | null; count?: number }[] }
  }

  /** Waits until the table shows what REST answers for `body`. */
  const tableMatches = async (page: Page, segment: string, body: Record<string, unknown>) => {
    const answer = await rest(segment, body)
    const series = String(body.calculation).startsWith('time_series')
    await expect.poll(() => readTable(page), { timeout: 10_000 }).toEqual(expectedTable(answer, series))
    return answer
  }

  beforeAll(async () => {
    user = await t.user('Metrics Owner')
    const make = async (name: string) => {
      const res = await t.server.http('POST', '/api/v1/agents', { token: user.token, body: { name, description: 'for metrics' } })
      expect(res.status).toBe(201)
      return res.body.data.uuid as string
    }
    helper = await make('Metrics helper')
    quiet = await make('Quiet agent')
    // Two runs in one thread against the local model server: one thread, four messages.
    const first = await t.server.http('POST', `/api/v1/agents/${helper}/run`, { token: user.token, body: { input: 'Hello metrics' } })
    expect(first.status).toBe(200)
    const thread = first.body.data.run.thread_uuid as string
    const second = await t.server.http('POST', `/api/v1/agents/${helper}/run`, { token: user.token, body: { input: 'And again', thread_uuid: thread } })
    expect(second.status).toBe(200)
    const workflow = await t.server.http('POST', '/api/v1/workflows', {
      token: user.token,
      body: { name: 'Metrics flow', nodes: [{ id: 'start', type: 'manual_trigger', parameters: {} }], edges: [] },
    })
    expect(workflow.status).toBe(201)
    const execution = await t.server.http('POST', `/api/v1/workflows/${workflow.body.data.uuid}/run`, { token: user.token, body: { input: { n: 1 } } })
    expect(execution.status).toBe(200)
  })

  it('shows the workspace summary as cards equal to the workspace metrics over REST', async () => {
    const page = await t.newPage()
    await t.open(page, user, '/metrics')
    const summary = await t.server.http('GET', `/api/v1/workspaces/${user.workspaceUuid}/metrics`, { token: user.token })
    expect(summary.status).toBe(200)
    const data = summary.body.data as Record<string, number>
    expect(data).toMatchObject({ agents: 2, threads: 1, messages: 4, workflows: 1, workflow_executions: 1, runs: 2, members: 1 })
    const cards = page.getByRole('region', { name: /Workspace summary/ })
    const labels: [string, string][] = [
      ['agents', 'Agents'],
      ['prompts', 'Prompts'],
      ['workflows', 'Workflows'],
      ['threads', 'Threads'],
      ['messages', 'Messages'],
      ['workflow_executions', 'Workflow executions'],
      ['members', 'Members'],
      ['runs', 'Runs'],
      ['tokens', 'Tokens used'],
    ]
    for (const [key, label] of labels) {
      const card = cards.locator('dl > div').filter({ has: page.locator('dt', { hasText: new RegExp(`^${label}$`) }) })
      await expect.poll(async () => parseShown((await card.locator('dd').textContent()) ?? ''), { timeout: 10_000 }).toBe(data[key])
    }
  }, 90_000)

  it('shows each endpoint, calculation and granularity in a table equal to the REST answer for the same parameters', async () => {
    const page = await t.newPage()
    await t.open(page, user, '/metrics')
    // The default: agents, a count.
    const agents = await tableMatches(page, 'agents', { calculation: 'accumulated_count' })
    expect(agents.total).toBe(2)

    await choose(page, 'Resource', 'Messages')
    await choose(page, 'Calculation', 'Count over time')
    const daily = await tableMatches(page, 'messages', { calculation: 'time_series_count', granularity: 'daily' })
    expect(daily.total).toBe(4)
    await page.getByRole('img', { name: /Chart of Messages/ }).waitFor()

    await page.getByText('Monthly', { exact: true }).click()
    await expect.poll(() => new URL(page.url()).searchParams.get('granularity')).toBe('monthly')
    const monthly = await tableMatches(page, 'messages', { calculation: 'time_series_count', granularity: 'monthly' })
    expect(monthly.data.every((point) => point.date!.endsWith('-01'))).toBe(true)

    await choose(page, 'Calculation', 'Average over time')
    await choose(page, 'Column averaged', 'Total tokens')
    const tokens = await tableMatches(page, 'messages', { calculation: 'time_series_average', granularity: 'monthly', column: 'total_tokens' })
    expect(tokens.total).toBeGreaterThan(0)
    await t.screenshot(page, 'metrics-table')

    await choose(page, 'Resource', 'Workflow executions')
    await choose(page, 'Calculation', 'Average')
    const durations = await tableMatches(page, 'workflow-executions', { calculation: 'accumulated_average', column: 'duration_ms' })
    expect(durations.data[0]!.count).toBe(1)
  }, 90_000)

  it('filters by agent, says when nothing matches, and shows a refused date range at its field', async () => {
    const page = await t.newPage()
    await t.open(page, user, '/metrics?resource=threads')
    await tableMatches(page, 'threads', { calculation: 'accumulated_count' })
    await choose(page, 'Agent', 'Quiet agent')
    const none = await rest('threads', { calculation: 'accumulated_count', agent_uuid: quiet })
    expect(none.total).toBe(0)
    await page.getByText('No data').waitFor()
    await expect.poll(() => page.getByRole('table', { name: 'Metric values' }).count()).toBe(0)

    await choose(page, 'Agent', 'Metrics helper')
    const one = await tableMatches(page, 'threads', { calculation: 'accumulated_count', agent_uuid: helper })
    expect(one.total).toBe(1)

    // A week of days typed into the date inputs: one row per UTC day, gaps as 0.
    const day = (daysAgo: number) => new Date(Date.now() - daysAgo * 86_400_000).toISOString().slice(0, 10)
    const from = page.getByRole('textbox', { name: 'From' })
    const to = page.getByRole('textbox', { name: 'To' })
    await from.fill(day(6))
    await from.press('Tab')
    await to.fill(day(0))
    await to.press('Tab')
    await choose(page, 'Calculation', 'Count over time')
    const week = await tableMatches(page, 'threads', { calculation: 'time_series_count', granularity: 'daily', agent_uuid: helper, date_from: day(6), date_to: day(0) })
    expect(week.data).toHaveLength(7)
    await t.screenshot(page, 'metrics')

    // A start after the end: the service's 400 names date_from, shown at "From".
    await from.fill('2030-01-02')
    await from.press('Tab')
    await to.fill('2030-01-01')
    await to.press('Tab')
    await expect.poll(() => from.getAttribute('aria-invalid')).toBe('true')
    const describedBy = ((await from.getAttribute('aria-describedby')) ?? '').split(/\s+/).filter(Boolean)
    const messages = await Promise.all(describedBy.map((id) => page.locator(`[id="${id}"]`).textContent()))
    expect(messages.join(' ')).toContain('date_from must not be after date_to')
    expect(new URL(page.url()).searchParams.get('from')).toBe('2030-01-02')
  }, 90_000)

  it('fits a 360 px wide screen', async () => {
    const page = await t.newPage({ width: 360, height: 740 })
    await t.open(page, user, '/metrics?resource=messages&calculation=time_series_count')
    await tableMatches(page, 'messages', { calculation: 'time_series_count', granularity: 'daily' })
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth')
    expect(overflow).toBeLessThanOrEqual(0)
    await t.screenshot(page, 'metrics-360')
  }, 90_000)
})
