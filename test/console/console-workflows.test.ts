/**
 * The console's workflow screens in a real browser (src/console/screens/workflows): a workflow
 * created on the list screen (a double click creates one) and built in the editor (a node dragged
 * from the palette onto the canvas, the next clicked in the palette and so connected after the
 * selected one, one connection dragged between handles and one made with the keyboard form, Set's
 * values filled as key/value rows of the form built from the type's JSON Schema), saved and read
 * back over REST; a save the service refuses shown on the node it names, with nothing stored;
 * activation, a manual run followed on the canvas (each node's status, a node's output in the side
 * panel), the executions list and one execution's details refreshing while it runs; the list's
 * search, active filter, run and delete; 360 px.
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

  /** Adds a node of the catalogue's type `label` by clicking it in the palette. */
  async function addNode(page: Page, label: string) {
    await page.getByRole('button', { name: `Add ${label}`, exact: true }).click()
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
    // A double click creates one workflow: the button is disabled while the first create is under way.
    await dialog.getByRole('button', { name: 'Create' }).dblclick()
    await page.waitForURL(/\/console\/workflows\/[0-9a-f-]{36}$/)
    const uuid = new URL(page.url()).pathname.split('/').pop()!
    await page.getByRole('heading', { name: 'Greeter' }).waitFor()
    expect(await read(user, uuid)).toMatchObject({ name: 'Greeter', nodes: [], edges: [] })
    const all = await t.server.http('GET', '/api/v1/workflows', { token: user.token })
    expect(all.body.data.map((w: StoredWorkflow) => w.name)).toEqual(['Greeter'])

    // The palette: searched, grouped; a trigger dragged onto the canvas, placed where it was dropped.
    const palette = page.getByRole('region', { name: 'Nodes', exact: true })
    await palette.getByRole('textbox', { name: 'Search node types' }).fill('webhook')
    await expect.poll(() => palette.getByRole('button', { name: /^Add / }).count()).toBe(2)
    await palette.getByRole('region', { name: 'Triggers' }).getByRole('button', { name: 'Add Webhook trigger' }).waitFor()
    await palette.getByRole('textbox', { name: 'Search node types' }).fill('')
    const pane = page.locator('.react-flow__pane')
    const box = (await pane.boundingBox())!
    await palette.getByRole('button', { name: 'Add Manual trigger' }).dragTo(pane, { targetPosition: { x: 160, y: box.height / 2 } })
    await page.getByRole('heading', { name: 'Edit Manual trigger' }).waitFor()
    const triggerBox = (await page.locator('.react-flow__node[data-id="manual_trigger"]').boundingBox())!
    expect(Math.abs(triggerBox.x + triggerBox.width / 2 - (box.x + 160))).toBeLessThan(40)
    // Clicked while the trigger is selected: the set goes after it, connected to it.
    await addNode(page, 'Set')
    await page.getByRole('heading', { name: 'Connections (1)' }).waitFor()
    await page.getByText('Manual trigger → Set').waitFor()
    const setBox = (await page.locator('.react-flow__node[data-id="set"]').boundingBox())!
    expect(setBox.x).toBeGreaterThan(triggerBox.x + triggerBox.width)
    // The set's parameters in the form built from its JSON Schema: its values as key/value rows, and an enum.
    const values = page.getByRole('group', { name: 'Values' })
    await values.getByRole('button', { name: 'Add a row to Values' }).click()
    await values.getByRole('textbox', { name: 'Values key 1' }).fill('greeting')
    await values.getByRole('textbox', { name: 'Values value 1' }).fill("='Hello, ' & $.name")
    await values.getByRole('button', { name: 'Add a row to Values' }).click()
    await values.getByRole('textbox', { name: 'Values key 2' }).fill('count')
    await values.getByRole('combobox', { name: 'Values type 2' }).click()
    await page.getByRole('option', { name: 'Number' }).click()
    await values.getByRole('textbox', { name: 'Values value 2' }).fill('two')
    await values.getByText('Enter a number, or an expression starting with =').waitFor()
    await values.getByRole('textbox', { name: 'Values value 2' }).fill('2')
    await page.getByRole('combobox', { name: 'Mode' }).click()
    await page.getByRole('option', { name: 'replace' }).click()
    await page.getByText('Unsaved changes').waitFor()
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByRole('status').getByText(/^Saved at /).waitFor()
    await page.getByText('Unsaved changes').waitFor({ state: 'detached' })
    const saved = await read(user, uuid)
    expect(saved.nodes).toEqual([
      expect.objectContaining({ id: 'manual_trigger', type: 'manual_trigger', name: 'Manual trigger', parameters: {} }),
      expect.objectContaining({ id: 'set', type: 'set', name: 'Set', parameters: { values: { greeting: "='Hello, ' & $.name", count: 2 }, mode: 'replace' } }),
    ])
    expect(saved.edges).toEqual([{ id: 'edge_1', source: 'manual_trigger', target: 'set' }])
    await t.screenshot(page, 'workflow-editor')

    // With nothing selected (a click on the background), a clicked node is added unconnected; then
    // connected by dragging the set's output handle onto its input, which the list can undo.
    await pane.click({ position: { x: 20, y: 20 } })
    await page.getByRole('heading', { name: /^Edit / }).waitFor({ state: 'detached' })
    await addNode(page, 'HTTP request')
    await page.getByRole('heading', { name: 'Connections (1)' }).waitFor()
    await page
      .locator('.react-flow__node[data-id="set"] .react-flow__handle.source')
      .dragTo(page.locator('.react-flow__node[data-id="http_request"] .react-flow__handle.target'))
    await page.getByRole('heading', { name: 'Connections (2)' }).waitFor()
    await page.getByRole('button', { name: 'Delete connection Set → HTTP request' }).click()
    await page.getByRole('heading', { name: 'Connections (1)' }).waitFor()

    // The HTTP request with an ftp URL, connected from the keyboard form: the service refuses the save.
    await page.getByRole('button', { name: 'Edit HTTP request' }).click()
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

    // Run by hand: the dialog closes and the run is followed on the canvas, each node showing its status.
    await page.getByRole('button', { name: 'Run', exact: true }).click()
    const run = page.getByRole('dialog', { name: 'Run Greeter' })
    await run.getByRole('textbox', { name: 'Input (JSON)' }).fill('{"name": "Ada"}')
    await run.getByRole('button', { name: 'Run', exact: true }).click()
    await run.waitFor({ state: 'detached' })
    const bar = page.getByRole('region', { name: 'Execution on the canvas' })
    await bar.getByText('succeeded').waitFor({ timeout: 15_000 })
    await page.locator('.react-flow__node[data-id="manual_trigger"] [data-run-status="succeeded"]').waitFor()
    await page.locator('.react-flow__node[data-id="set"] [data-run-status="succeeded"]').getByText('succeeded').waitFor()
    expect(new URL(page.url()).searchParams.get('execution')).toMatch(/^[0-9a-f-]{36}$/)
    // A node clicked on the canvas shows its input and output in the side panel, not in a dialog.
    await page.locator('.react-flow__node[data-id="set"]').click()
    const setRun = page.getByRole('region', { name: 'Run of Set' })
    await setRun.getByLabel('Output of set').getByText('"greeting": "Hello, Ada"').waitFor()
    expect(await setRun.getByLabel('Output of set').textContent()).toContain('"count": 2')
    expect(await setRun.getByLabel('Input of set').textContent()).toContain('"name": "Ada"')
    expect(await setRun.getByText('Duration').count()).toBe(1)
    expect(await page.getByRole('dialog').count()).toBe(0)
    await t.screenshot(page, 'workflow-run-on-canvas')
    // From the node list too (the node is brought into view and selected).
    await page.getByRole('button', { name: 'Edit Manual trigger' }).click()
    expect(await page.getByRole('region', { name: 'Run of Manual trigger' }).getByLabel('Output of manual_trigger').textContent()).toContain('"name": "Ada"')

    // Among the executions: the list, and the execution's details.
    await bar.getByRole('link', { name: 'Open among the executions' }).click()
    await page.getByRole('heading', { name: 'Executions of Greeter' }).waitFor()
    const rows = page.getByRole('table', { name: 'Executions' }).getByRole('row')
    await rows.nth(1).getByText('succeeded').waitFor()
    await rows.nth(1).getByText('manual').waitFor()
    expect(await rows.count()).toBe(2)
    const details = page.getByRole('region', { name: /^Execution of / })
    await details.getByRole('region', { name: 'Node set' }).getByLabel('Output of set').getByText('"greeting": "Hello, Ada"').waitFor()
    await details.getByRole('region', { name: 'Node manual_trigger' }).getByText('Started').waitFor()
    const executions = await t.server.http('GET', `/api/v1/workflow-executions?workflow_uuid=${uuid}`, { token: user.token })
    expect(executions.body.data).toEqual([
      expect.objectContaining({ status: 'succeeded', mode: 'manual', input: { name: 'Ada' }, output: { greeting: 'Hello, Ada', count: 2 } }),
    ])
    expect(await details.textContent()).toContain(executions.body.data[0].uuid)
    await t.screenshot(page, 'workflow-execution')
    // And back on the canvas from there.
    await details.getByRole('link', { name: 'Show on the canvas' }).click()
    await page.locator('.react-flow__node[data-id="set"] [data-run-status="succeeded"]').waitFor()
    expect(new URL(page.url()).searchParams.get('execution')).toBe(executions.body.data[0].uuid)
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

  it('refreshes a running execution until it ends, fits 360 px, picks an account by name', async () => {
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

    // An HTTP request after the wait: its account picked by name, its headers as key/value rows.
    const post = async (path: string, body: Record<string, unknown>) => {
      const res = await t.server.http('POST', path, { token: user.token, body })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      return res.body.data as { uuid: string }
    }
    const provider = await post('/api/v1/providers', { name: 'Weather API', type: 'tool', base_url: 'https://api.example.com' })
    const account = await post('/api/v1/accounts', { name: 'Weather key', provider_uuid: provider.uuid, secret: 'sk-weather-0000000000' })
    await page.getByRole('textbox', { name: 'Seconds' }).fill('6')
    await page.getByRole('button', { name: 'Add HTTP request', exact: true }).click()
    await page.getByRole('heading', { name: 'Edit HTTP request' }).waitFor()
    await page.getByText('pause → HTTP request').waitFor()
    await page.getByRole('textbox', { name: 'URL' }).fill('https://api.example.com/today')
    await page.getByRole('textbox', { name: 'Account' }).or(page.getByRole('combobox', { name: 'Account' })).click()
    await page.getByRole('option', { name: 'Weather key (Weather API)' }).click()
    const headers = page.getByRole('group', { name: 'Headers' })
    await headers.getByRole('button', { name: 'Add a row to Headers' }).click()
    await headers.getByRole('textbox', { name: 'Headers key 1' }).fill('X-Trace')
    await headers.getByRole('textbox', { name: 'Headers value 1' }).fill('abc')
    expect(await overflow(page)).toBeLessThanOrEqual(0)
    await page.getByRole('button', { name: 'Save' }).click()
    await page.getByRole('status').getByText(/^Saved at /).waitFor()
    const stored = await read(user, slow.uuid)
    expect(stored.nodes.find((node) => node.id === 'http_request')?.parameters).toMatchObject({
      url: 'https://api.example.com/today',
      account_uuid: account.uuid,
      headers: { 'X-Trace': 'abc' },
    })
    expect(stored.edges).toContainEqual(expect.objectContaining({ source: 'pause', target: 'http_request' }))
    await t.screenshot(page, 'workflow-http-account-360')
  })
})
