/**
 * The audit log, usage and budgets screens and the agent version comparison in a real browser
 * (docs/console.md): an agent created and changed over REST is found in the audit log by its
 * resource, its update opened shows each field's value before and after with the request id the
 * service stored, a filter the service refuses is shown at its field, and the export downloads
 * the same events as NDJSON; a member reads the 403 in words. A run against the local model
 * server shows its tokens on the usage screen as `GET usage` counts them; a budget without a limit
 * is refused at the cost limit, then created, changed and deleted. Two versions of the agent
 * compared show the instruction as a line diff. Each stored change is checked over REST.
 */
import { readFile } from 'node:fs/promises'
import type { Page } from 'playwright-core'
import { beforeAll, expect, it } from 'vitest'
import { describeConsole, type ConsoleUser } from '../helpers/console.ts'

/** The model the upstream serves. */
const MODEL = 'gpt-4o-mini'

/** Whether a control is marked invalid, with the message describing it. */
async function invalidWith(page: Page, label: string): Promise<string> {
  const control = page.getByRole('textbox', { name: label }).first()
  await expect.poll(() => control.getAttribute('aria-invalid')).toBe('true')
  const ids = ((await control.getAttribute('aria-describedby')) ?? '').split(/\s+/).filter(Boolean)
  const texts = await Promise.all(ids.map((id) => page.locator(`[id="${id}"]`).textContent()))
  return texts.join(' ')
}

describeConsole('web console: audit log, usage and budgets, version diff', (t) => {
  let owner: ConsoleUser
  let agentUuid = ''
  const rest = async (method: string, path: string, body?: Record<string, unknown>, user = owner) => {
    const res = await t.server.http(method, `/api/v1${path}`, { token: user.token, body })
    return res as { status: number; body: Record<string, any> }
  }

  beforeAll(async () => {
    owner = await t.user('Audit Owner')
    const created = await rest('POST', '/agents', {
      name: 'Audited helper',
      instruction: 'Answer briefly.\nBe kind.\nSign with a smile.',
      metadata: { large_language_model: MODEL },
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    agentUuid = created.body.data.uuid
    const updated = await rest('PUT', `/agents/${agentUuid}`, {
      name: 'Audited helper 2',
      instruction: 'Answer briefly.\nBe precise.\nSign with a smile.',
    })
    expect(updated.status, JSON.stringify(updated.body)).toBe(200)
    const run = await rest('POST', `/agents/${agentUuid}/run`, { input: 'Hello usage' })
    expect(run.status, JSON.stringify(run.body)).toBe(200)
  })

  it('filters the audit log by the agent, opens its update, refuses a bad filter, exports, and tells a member why not', async () => {
    const page = await t.newPage()
    await t.open(page, owner, '/agents')
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Audit log' }).click()
    const table = page.getByRole('table', { name: 'Audit events' })
    await table.getByText('auth.sign_up').waitFor()

    // Filtered by the agent: its update and its create, newest first, as the service lists them.
    await page.getByRole('textbox', { name: 'Resource', exact: true }).fill(agentUuid)
    const listed = await rest('GET', `/audit-events?resource_uuid=${agentUuid}`)
    expect(listed.body.data.map((event: { action: string }) => event.action)).toEqual(['agent.update', 'agent.create'])
    await expect.poll(() => table.getByRole('row').count()).toBe(3)
    expect(await table.getByRole('row').nth(1).textContent()).toContain('agent.update')
    expect(await table.getByRole('row').nth(2).textContent()).toContain('agent.create')
    expect(await table.getByRole('row').nth(1).textContent()).toContain('Audit Owner')

    // The update opened: actor, request id, address, user agent, and what each field changed.
    const stored = listed.body.data[0]
    await table
      .getByRole('row')
      .nth(1)
      .getByRole('button', { name: /^Open the agent\.update event/ })
      .click()
    const dialog = page.getByRole('dialog', { name: 'Audit event' })
    const changes = dialog.getByRole('table', { name: 'Changes' })
    const nameRow = changes.getByRole('row').filter({ has: page.getByText('name', { exact: true }) })
    await nameRow.waitFor()
    expect(await nameRow.getByRole('cell').allTextContents()).toEqual(['Audited helper', 'Audited helper 2'])
    const instructionRow = changes.getByRole('row').filter({ has: page.getByText('instruction', { exact: true }) })
    expect(await instructionRow.textContent()).toContain('Be precise.')
    const facts = dialog.getByRole('table', { name: 'Event' })
    expect(await facts.textContent()).toContain(stored.request_id)
    expect(await facts.textContent()).toContain(stored.ip)
    expect(await facts.textContent()).toContain(stored.user_agent)
    expect(await facts.textContent()).toContain(`Audit Owner (user #${stored.actor.user.id})`)
    await t.screenshot(page, 'audit-event')
    await page.keyboard.press('Escape')
    await dialog.waitFor({ state: 'detached' })

    // Exported with the same filter: the same events, one JSON a line.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export', exact: true }).click()])
    expect(download.suggestedFilename()).toMatch(/^audit-events-\d{4}-\d{2}-\d{2}\.ndjson$/)
    const lines = (await readFile((await download.path())!, 'utf8')).trim().split('\n')
    expect(lines.map((line) => JSON.parse(line).uuid)).toEqual(listed.body.data.map((event: { uuid: string }) => event.uuid))
    await t.screenshot(page, 'audit')
    await page.setViewportSize({ width: 360, height: 740 })
    await expect
      .poll(() => page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth'))
      .toBeLessThanOrEqual(0)
    await page.setViewportSize({ width: 1280, height: 800 })

    // A prefix the service takes; a resource that is no uuid is refused at its field.
    await page.getByRole('textbox', { name: 'Action' }).fill('agent.*')
    await expect.poll(() => table.getByRole('row').count()).toBe(3)
    await page.getByRole('textbox', { name: 'Resource', exact: true }).fill('not-a-uuid')
    expect(await invalidWith(page, 'Resource')).toMatch(/uuid/i)
    expect((await rest('GET', '/audit-events?resource_uuid=not-a-uuid')).status).toBe(400)

    // A member of the workspace reads why not.
    const member = await t.user('Audit Member')
    expect((await rest('POST', `/workspaces/${owner.workspaceUuid}/members`, { email: member.email, role: 'member' })).status).toBe(201)
    await t.open(page, member, '/agents')
    await page.evaluate((uuid) => localStorage.setItem('aw.console.workspace', uuid), owner.workspaceUuid)
    await page.goto(`${t.server.url}/console/audit`)
    await page.getByRole('alert').filter({ hasText: 'Not allowed' }).getByText('may not read the audit log').waitFor()
    expect(await page.getByRole('button', { name: 'Export' }).count()).toBe(0)
    await t.screenshot(page, 'audit-forbidden')
  }, 120_000)

  it("shows the run's tokens on the usage screen, and creates, changes and deletes a budget", async () => {
    const usage = await rest('GET', '/usage?group_by=agent')
    const totals = usage.body.meta.totals as { runs: number; total_tokens: number; prompt_tokens: number; cost: number }
    expect(totals.runs).toBe(1)
    expect(totals.total_tokens).toBeGreaterThan(0)
    const page = await t.newPage()
    await t.open(page, owner, '/agents')
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Usage' }).click()
    const tokensCard = page.getByRole('group', { name: 'Total tokens' })
    await tokensCard.getByText(totals.total_tokens.toLocaleString('en-US'), { exact: true }).waitFor()
    const byAgent = page.getByRole('table', { name: 'Usage by agent' })
    const agentRow = byAgent.getByRole('row').filter({ hasText: 'Audited helper 2' })
    expect(await agentRow.getByRole('cell').allTextContents()).toEqual([
      '1',
      totals.prompt_tokens.toLocaleString('en-US'),
      (totals.total_tokens - totals.prompt_tokens).toLocaleString('en-US'),
      totals.total_tokens.toLocaleString('en-US'),
      expect.stringMatching(/^\$/),
    ])
    // The day of the run drawn as a bar (days without usage are drawn empty).
    const chart = page.getByRole('img', { name: /^Chart of tokens per day, by agent/ })
    await expect.poll(() => chart.locator('.recharts-bar-rectangle path').count()).toBe(1)
    // Broken down by model: the upstream's model.
    await page.locator('label.mantine-SegmentedControl-label', { hasText: /^Model$/ }).click()
    await page.getByRole('table', { name: 'Usage by model' }).getByText(MODEL).waitFor()

    // A budget without a limit: the service's 400 at the cost limit, nothing stored.
    await page.getByRole('button', { name: 'New budget' }).click()
    const dialog = page.getByRole('dialog', { name: 'New budget' })
    await dialog.getByRole('textbox', { name: 'Name' }).fill('Team month')
    await dialog.getByRole('button', { name: 'Create budget' }).click()
    expect(await invalidWith(page, 'Cost limit (USD)')).toContain('limit_cost or limit_tokens is required')
    expect((await rest('GET', '/budgets')).body.data).toHaveLength(0)
    await dialog.getByRole('textbox', { name: 'Token limit' }).fill('100000')
    await dialog.getByRole('button', { name: 'Create budget' }).click()
    await dialog.waitFor({ state: 'detached' })
    const budgets = page.getByRole('table', { name: 'Budgets' })
    const row = budgets.getByRole('row').filter({ hasText: 'Team month' })
    await row.getByText(`Tokens: ${totals.total_tokens.toLocaleString('en-US')} of 100,000`).waitFor()
    const [budget] = (await rest('GET', '/budgets')).body.data
    expect(budget).toMatchObject({
      name: 'Team month',
      scope: 'workspace',
      period: 'month',
      limit_tokens: 100000,
      limit_cost: null,
      action: 'block',
    })
    expect(budget.spent_tokens).toBe(totals.total_tokens)
    await t.screenshot(page, 'usage')
    // Away from the charts, whose tooltip stays where the pointer last was.
    await page.mouse.move(0, 0)
    await page.setViewportSize({ width: 360, height: 740 })
    await expect
      .poll(() => page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth'))
      .toBeLessThanOrEqual(0)
    await t.screenshot(page, 'usage-360')
    await page.setViewportSize({ width: 1280, height: 800 })

    // Changed: a cost limit added, only alerting.
    await row.getByRole('button', { name: 'Change the budget Team month' }).click()
    const edit = page.getByRole('dialog', { name: 'Change the budget “Team month”' })
    await edit.getByRole('textbox', { name: 'Cost limit (USD)' }).fill('5')
    await edit.getByRole('combobox', { name: 'When reached' }).click()
    await page.getByRole('option', { name: 'Only alert' }).click()
    await edit.getByRole('button', { name: 'Save budget' }).click()
    await edit.waitFor({ state: 'detached' })
    await row.getByText('Alert only').waitFor()
    expect((await rest('GET', `/budgets/${budget.uuid}`)).body.data).toMatchObject({
      limit_cost: 5,
      limit_tokens: 100000,
      action: 'notify',
    })

    // Deleted after a confirmation.
    await row.getByRole('button', { name: 'Delete the budget Team month' }).click()
    await page.getByRole('dialog', { name: 'Delete this budget?' }).getByRole('button', { name: 'Delete budget' }).click()
    await page.getByText('No budgets').waitFor()
    expect((await rest('GET', `/budgets/${budget.uuid}`)).status).toBe(404)
  }, 120_000)

  it('compares two versions of the agent, the instruction as a line diff', async () => {
    const page = await t.newPage()
    await t.open(page, owner, `/agents/${agentUuid}`)
    const compare = page.getByRole('group', { name: 'Compare two versions' })
    await compare.getByRole('combobox', { name: 'Compare version' }).waitFor()
    expect(await compare.getByRole('combobox', { name: 'Compare version' }).inputValue()).toBe('v1')
    expect(await compare.getByRole('combobox', { name: 'with version' }).inputValue()).toBe('v2 (current)')
    await compare.getByRole('button', { name: 'Compare' }).click()
    const dialog = page.getByRole('dialog', { name: 'Version 1 compared with version 2' })
    const instruction = dialog.getByRole('region', { name: 'Instruction changed' })
    await instruction.locator('del').filter({ hasText: 'Be kind.' }).waitFor()
    expect(await instruction.locator('ins').allTextContents()).toEqual(['+ Be precise.'])
    expect(await instruction.locator('del').allTextContents()).toEqual(['- Be kind.'])
    expect(await instruction.getByText('Sign with a smile.').count()).toBe(1)
    const name = dialog.getByRole('region', { name: 'Name changed' })
    expect(await name.getByRole('cell').allTextContents()).toEqual(['Audited helper', 'Audited helper 2'])
    await dialog.getByText('Unchanged: description, metadata, photo, tools, workflows.').waitFor()
    const [v1, v2] = await Promise.all([rest('GET', `/agents/${agentUuid}/versions/1`), rest('GET', `/agents/${agentUuid}/versions/2`)])
    expect(v1.body.data.snapshot.instruction).toContain('Be kind.')
    expect(v2.body.data.snapshot.instruction).toContain('Be precise.')
    await t.screenshot(page, 'agent-version-diff')
  }, 90_000)
})
