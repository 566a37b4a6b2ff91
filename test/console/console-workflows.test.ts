/**
 * The console's workflow screens in a real browser (src/console/screens/workflows): a workflow
 * created on the list screen and built in the editor (nodes from the node type catalogue, one
 * connection dragged on the React Flow canvas and one made with the keyboard form, a parameter
 * filled in the form built from the type's JSON Schema), saved and read back over REST; a save
 * the service refuses shown on the node it names, with nothing stored; activation, a manual run
 * with each node's input, output and timing, the executions list and one execution's details
 * refreshing while it runs; the list's search, active filter, run and delete; 360 px.
 */
import type { Page } from 'playwright-core'
import { expect, it } from 'vitest'
import { describeConsole, type ConsoleUser } from '../helpers/console.ts'

interface StoredWorkflow {
  uuid: string
  name: string
  is_active: boolean
  updated_at: string
  nodes: { id: string; type: string; name?: string; parameters?: Record<string, unknown> }[]
  edges: { id?: string; source: string; target: string; source_handle?: string }[]
}

const trigger = { id: 'start', type: 'manual_trigger', parameters: {}, position: { x: 0, y: 80 } }

describeConsole('web console: workflows', (t) => {
  const read = async (user: ConsoleUser, uuid: string) => {
    const res = await t.server.http('GET', `/api/v1/workflows/${uuid}`, { token: user.token })
    expect(res.status).toBe(200)
    return res.body.data as StoredWorkflow
  }
  const create = async (user: ConsoleUser, body: Record<string, unknown>) => {
    const res = await t.server.http('POST', '/api/v1/workflows', { token: user.token, body })
    expect(res.status, JSON.stringify(res.body)).toBe(201)
    return res.body.data as StoredWorkflow
  }
  const overflow = (page: Page) => page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth')

  /** Adds a node of the catalogue's type `label` from the "Add a node" panel. */
  async function addNode(page: Page, label: string) {
    await page.getByRole('combobox', { name: 'Node type' }).click()
    await page.getByRole('option', { name: label, exact: true }).click()
    await page.getByRole('button', { name: 'Add node' }).click()
    await page.getByRole('heading', { name: `Edit ${label}` }).waitFor()
  }

  it('creates a workflow on the screen, builds and saves its graph, shows a refused save on its node, activates and runs it', async () => {
    const user = await t.user()
    const page = await t.newPage()
    await t.open(page, user, '/workflows')
    await page.getByText('No workflows yet').waitFor()
    await page.getByRole('button', { name: 'New workflow' }).click()
    const dialog = page.getByRole('dialog', { name: 'New workflow' })
    await dialog.getByRole('textbox', { name: 'Name' }).fill('Greeter')
    await dialog.getByRole('textbox', { name: 'Description' }).fill('Says hello to whoever runs it')
    await dialog.getByRole('button', { name: 'Create' }).click()
    await page.waitForURL(/\/console\/workflows\/[0-9a-f-]{36}$/)
    const uuid = new URL(page.url()).pathname.split('/').pop()!
    await page.getByRole('heading', { name: 'Greeter' }).waitFor()
    expect(await read(user, uuid)).toMatchObject({ name: 'Greeter', nodes: [], edges: [] })

    // Two nodes from the catalogue, connected by dragging the trigger's output handle onto the set's input.
    await addNode(page, 'Manual trigger')
    await addNode(page, 'Set')
    await page
      .locator('.react-flow__node[data-id="manual_trigger"] .react-flow__handle.source')
      .dragTo(page.locator('.react-flow__node[data-id="set"] .react-flow__handle.target'))
    await page.getByRole('heading', { name: 'Connections (1)' }).waitFor()
    await page.getByText('Manual trigger → Set').waitFor()
    // The set's parameters in the form built from its JSON Schema: a JSON field and an enum.
    await page.getByRole('textbox', { name: 'Values' }).fill(`{"greeting": "='Hello, ' & $.name"}`)
    await page.getByRole('combobox', { name: 'Mode' }).click()
    await page.getByRole('option', { name: 'replace' }).click()
    await page.getByText('Unsaved changes').waitFor()
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByRole('status').getByText(/^Saved at /).waitFor()
    await page.getByText('Unsaved changes').waitFor({ state: 'detached' })
    const saved = await read(user, uuid)
    expect(saved.nodes).toEqual([
      expect.objectContaining({ id: 'manual_trigger', type: 'manual_trigger', name: 'Manual trigger', parameters: {} }),
      expect.objectContaining({ id: 'set', type: 'set', name: 'Set', parameters: { values: { greeting: "='Hello, ' & $.name" }, mode: 'replace' } }),
    ])
    expect(saved.edges).toEqual([{ id: 'edge_1', source: 'manual_trigger', target: 'set' }])
    await t.screenshot(page, 'workflow-editor')

    // An HTTP request with an ftp URL, connected from the keyboard form: the service refuses the save.
    await addNode(page, 'HTTP request')
    await page.getByRole('textbox', { name: 'URL' }).fill('ftp://example.com/report')
    await page.getByRole('combobox', { name: 'Connect from' }).click()
    await page.getByRole('option', { name: 'Set (set)' }).click()
    await page.getByRole('combobox', { name: 'Connect to' }).click()
    await page.getByRole('option', { name: 'HTTP request (http_request)' }).click()
    await page.getByRole('button', { name: 'Connect', exact: true }).click()
    await page.getByText('Set → HTTP request').waitFor()
    await page.getByRole('button', { name: 'Edit Set' }).click()
    await page.getByRole('button', { name: 'Save' }).click()
    const problems = page.getByRole('alert').filter({ hasText: 'Not saved: one problem' })
    await problems.waitFor()
    // On the node it names: a red border and the message, on the canvas.
    const httpNode = page.locator('.react-flow__node[data-id="http_request"]')
    await httpNode.getByText('url: must be an http or https URL').waitFor()
    expect(await httpNode.locator('[data-invalid]').count()).toBe(1)
    expect(await page.locator('.react-flow__node[data-id="set"] [data-invalid]').count()).toBe(0)
    expect(await page.getByText('1 problem', { exact: true }).count()).toBe(1)
    // The list leads to the node: selected on the canvas, its editor focused, the message at its field.
    await problems.getByRole('button', { name: /Node HTTP request, url: must be an http or https URL/ }).click()
    const heading = page.getByRole('heading', { name: 'Edit HTTP request' })
    await heading.waitFor()
    await expect.poll(() => page.evaluate<string | null>("document.activeElement && document.activeElement.id")).toBe(await heading.getAttribute('id'))
    await page.locator('.react-flow__node.selected[data-id="http_request"]').waitFor()
    const url = page.getByRole('textbox', { name: 'URL' })
    expect(await url.getAttribute('aria-invalid')).toBe('true')
    const describedBy = (await url.getAttribute('aria-describedby'))!.split(/\s+/).filter(Boolean)
    const messages = await Promise.all(describedBy.map((id) => page.locator(`[id="${id}"]`).textContent()))
    expect(messages.join(' ')).toContain('must be an http or https URL')
    // Nothing of the refused save was stored.
    const afterRefusal = await read(user, uuid)
    expect(afterRefusal.nodes.map((node) => node.id)).toEqual(['manual_trigger', 'set'])
    expect(afterRefusal.edges).toEqual(saved.edges)
    await t.screenshot(page, 'workflow-invalid')

    // Deleting the node (from the list) and saving is accepted again.
    await page.getByRole('button', { name: 'Delete HTTP request' }).click()
    await page.getByRole('heading', { name: 'Connections (1)' }).waitFor()
    await page.getByRole('button', { name: 'Save' }).click()
    await expect.poll(async () => (await read(user, uuid)).updated_at).not.toBe(afterRefusal.updated_at)
    expect((await read(user, uuid)).nodes.map((node) => node.id)).toEqual(['manual_trigger', 'set'])

    // Activate.
    await page.getByRole('switch', { name: 'Active' }).click()
    await expect.poll(async () => (await read(user, uuid)).is_active).toBe(true)
    expect(await page.getByRole('switch', { name: 'Active' }).isChecked()).toBe(true)

    // Run by hand: the execution, node by node.
    await page.getByRole('button', { name: 'Run', exact: true }).click()
    const run = page.getByRole('dialog', { name: 'Run Greeter' })
    await run.getByRole('textbox', { name: 'Input (JSON)' }).fill('{"name": "Ada"}')
    await run.getByRole('button', { name: 'Run', exact: true }).click()
    await run.getByLabel('Execution output').getByText('"greeting": "Hello, Ada"').waitFor()
    const setRun = run.getByRole('region', { name: 'Node set' })
    await setRun.getByText('succeeded').waitFor()
    expect(await setRun.getByLabel('Input of set').textContent()).toContain('"name": "Ada"')
    expect(await setRun.getByLabel('Output of set').textContent()).toContain('"greeting": "Hello, Ada"')
    expect(await setRun.getByText('Duration').count()).toBe(1)
    expect(await run.getByRole('region', { name: 'Node manual_trigger' }).getByLabel('Output of manual_trigger').textContent()).toContain('"name": "Ada"')

    // Among the executions: the list, and the execution's details.
    await run.getByRole('link', { name: 'Open among the executions' }).click()
    await page.getByRole('heading', { name: 'Executions of Greeter' }).waitFor()
    const rows = page.getByRole('table', { name: 'Executions' }).getByRole('row')
    await rows.nth(1).getByText('succeeded').waitFor()
    await rows.nth(1).getByText('manual').waitFor()
    expect(await rows.count()).toBe(2)
    const details = page.getByRole('region', { name: /^Execution of / })
    await details.getByRole('region', { name: 'Node set' }).getByLabel('Output of set').getByText('"greeting": "Hello, Ada"').waitFor()
    await details.getByRole('region', { name: 'Node manual_trigger' }).getByText('Started').waitFor()
    const executions = await t.server.http('GET', `/api/v1/workflow-executions?workflow_uuid=${uuid}`, { token: user.token })
    expect(executions.body.data).toEqual([expect.objectContaining({ status: 'succeeded', mode: 'manual', input: { name: 'Ada' }, output: { greeting: 'Hello, Ada' } })])
    expect(await details.textContent()).toContain(executions.body.data[0].uuid)
    await t.screenshot(page, 'workflow-execution')
  })

  it('lists workflows with search and the active filter; turns one on, runs one and deletes one from the list', async () => {
    const user = await t.user()
    const nightly = await create(user, {
      name: 'Nightly report',
      description: 'Collects the numbers',
      is_active: true,
      nodes: [trigger, { id: 'collect', type: 'set', parameters: { values: { total: 3 } }, position: { x: 260, y: 80 } }],
      edges: [{ source: 'start', target: 'collect' }],
    })
    const draft = await create(user, { name: 'Draft idea', description: 'Not wired yet' })
    const long = 'A workflow whose name goes on and on, far longer than any column could hold without wrapping or truncating it'
    await create(user, { name: long, description: `${'word '.repeat(60)}end` })
    const page = await t.newPage()
    await t.open(page, user, '/workflows')
    const table = page.getByRole('table')
    await table.getByRole('link', { name: 'Nightly report', exact: true }).waitFor()
    expect(await table.getByRole('row').count()).toBe(4)
    await t.screenshot(page, 'workflows-list')

    await page.getByRole('textbox', { name: 'Search' }).fill('Nightly')
    await expect.poll(() => table.getByRole('row').count()).toBe(2)
    await page.getByRole('textbox', { name: 'Search' }).fill('')
    await expect.poll(() => table.getByRole('row').count()).toBe(4)
    const filter = page.getByRole('radiogroup', { name: 'Active' })
    await filter.getByText('Inactive', { exact: true }).click()
    await expect.poll(() => table.getByRole('row').count()).toBe(3)
    expect(await table.getByRole('link', { name: 'Nightly report', exact: true }).count()).toBe(0)
    await filter.getByText('Active', { exact: true }).click()
    await expect.poll(() => table.getByRole('row').count()).toBe(2)
    await filter.getByText('All', { exact: true }).click()
    await expect.poll(() => table.getByRole('row').count()).toBe(4)

    // Turn the draft on from its row, with the keyboard.
    await page.getByRole('switch', { name: 'Active: Draft idea' }).focus()
    await page.keyboard.press('Space')
    await expect.poll(async () => (await read(user, draft.uuid)).is_active).toBe(true)

    // Run from the list.
    await page.getByRole('button', { name: 'Run Nightly report' }).click()
    const run = page.getByRole('dialog', { name: 'Run Nightly report' })
    await run.getByRole('textbox', { name: 'Input (JSON)' }).fill('{"day": ')
    await run.getByRole('button', { name: 'Run', exact: true }).click()
    await run.getByText(/Not valid JSON/).waitFor()
    await run.getByRole('textbox', { name: 'Input (JSON)' }).fill('{"day": "monday"}')
    await run.getByRole('button', { name: 'Run', exact: true }).click()
    await run.getByLabel('Output of collect').getByText('"total": 3').waitFor()
    await run.getByRole('button', { name: 'Close', exact: true }).click()
    const executions = await t.server.http('GET', `/api/v1/workflow-executions?workflow_uuid=${nightly.uuid}`, { token: user.token })
    expect(executions.body.data).toEqual([expect.objectContaining({ status: 'succeeded', input: { day: 'monday' } })])

    // Delete, after confirming.
    await page.getByRole('button', { name: 'Delete Draft idea' }).click()
    const confirm = page.getByRole('dialog', { name: 'Delete workflow?' })
    await confirm.getByRole('button', { name: 'Delete' }).click()
    await table.getByRole('link', { name: 'Draft idea', exact: true }).waitFor({ state: 'detached' })
    expect((await t.server.http('GET', `/api/v1/workflows/${draft.uuid}`, { token: user.token })).status).toBe(404)

    // An unknown workflow says so in words.
    await page.goto(`${t.server.url}/console/workflows/00000000-0000-4000-8000-000000000000`)
    await page.getByText('Not found').waitFor()
  })

  it('refreshes a running execution until it ends, and fits 360 px', async () => {
    const user = await t.user()
    const slow = await create(user, {
      name: 'Slow one',
      nodes: [trigger, { id: 'pause', type: 'wait', parameters: { seconds: 6 }, position: { x: 260, y: 80 } }],
      edges: [{ source: 'start', target: 'pause' }],
    })
    const started = await t.server.http('POST', `/api/v1/workflows/${slow.uuid}/run`, { token: user.token, body: { input: { n: 1 }, background: true } })
    expect(started.status).toBe(202)
    const page = await t.newPage({ width: 360, height: 740 })
    await t.open(page, user, `/workflows/${slow.uuid}/executions?execution=${started.body.data.uuid}`)
    const details = page.getByRole('region', { name: /^Execution/ })
    // Still under way when the screen opened (the wait node takes six seconds)...
    await details.getByText(/^(queued|running)$/).first().waitFor()
    await details.getByRole('button', { name: 'Cancel execution' }).waitFor()
    await details.getByText('No node has finished yet.').waitFor()
    // ...then, without a reload, the screen shows it ended, and the node's part.
    await details.getByRole('region', { name: 'Node pause' }).getByText('succeeded').waitFor({ timeout: 30_000 })
    await page.getByRole('table', { name: 'Executions' }).getByText('succeeded').waitFor()
    expect(await details.getByRole('button', { name: 'Cancel execution' }).count()).toBe(0)
    expect(await overflow(page)).toBeLessThanOrEqual(0)

    await page.goto(`${t.server.url}/console/workflows`)
    await page.getByRole('link', { name: 'Slow one', exact: true }).waitFor()
    expect(await overflow(page)).toBeLessThanOrEqual(0)
    await page.getByRole('link', { name: 'Slow one', exact: true }).click()
    await page.getByRole('button', { name: 'Edit pause' }).click()
    await page.getByRole('heading', { name: 'Edit pause' }).waitFor()
    await page.getByRole('textbox', { name: 'Seconds' }).fill('90000')
    // The form checks the value as one types, without compiling code (the console's CSP forbids eval).
    await page.getByText('90000 is greater than 86400.').first().waitFor()
    expect(await overflow(page)).toBeLessThanOrEqual(0)
    await t.screenshot(page, 'workflows-narrow-360')
  })
})
