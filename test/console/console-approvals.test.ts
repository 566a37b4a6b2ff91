/**
 * The console's approvals screen in a real browser: three runs of an agent on the local test
 * model wait on a `Refund` tool that requires approval (made over REST); on the screen one call is
 * denied with a reason, one approved with edited arguments (a 400 from the tool's input schema
 * shown at the field first), and one decided over REST while its dialog is open (the 409 said in
 * the dialog, the list showing what became of it); each decision checked over REST.
 */
import { expect, it } from 'vitest'
import { describeConsole } from '../helpers/console.ts'

describeConsole('web console: approvals', (t) => {
  it('denies a call with a reason, approves one with edited arguments, and says when another was decided first', async () => {
    const user = await t.user('Grace Approver')
    const rest = (method: string, path: string, body?: unknown) => t.server.http(method, `/api/v1${path}`, { token: user.token, body })
    const tool = await rest('POST', '/tools', {
      name: 'Refund',
      description: 'Refunds an order',
      method: 'POST',
      // Refused at once when approved (a private address): the run goes on with a failed call.
      url: 'http://127.0.0.1:9/refunds',
      input_schema: { type: 'object', properties: { order: { type: 'string' }, amount: { type: 'number' } }, required: ['order'] },
      requires_approval: true,
    })
    expect(tool.status).toBe(201)
    const agent = await rest('POST', '/agents', {
      name: 'Support desk',
      metadata: { large_language_model: 'local-test-model' },
      tools: [{ tool_uuid: tool.body.data.uuid }],
    })
    expect(agent.status).toBe(201)
    const approvals: Record<string, string> = {}
    for (const order of ['A-1', 'A-2', 'A-3']) {
      const run = await rest('POST', `/agents/${agent.body.data.uuid}/run`, { input: `/call refund {"order":"${order}"}` })
      expect(run.status).toBe(200)
      expect(run.body.data.run.status).toBe('awaiting_approval')
      approvals[order] = run.body.data.approvals[0].uuid
    }

    const page = await t.newPage()
    await t.open(page, user, '/approvals')
    const row = (order: string) => page.getByRole('row', { name: new RegExp(`"${order}"`) })
    for (const order of ['A-1', 'A-2', 'A-3']) await row(order).getByText('pending').waitFor()
    await row('A-1').getByText('Support desk').waitFor()
    await t.screenshot(page, 'approvals')

    // Denied with a reason: the row stays, with its new status and the reason.
    await row('A-1').getByRole('button', { name: 'Deny refund' }).click()
    const denyDialog = page.getByRole('dialog', { name: 'Deny refund?' })
    await denyDialog.getByRole('textbox', { name: 'Reason' }).fill('Refunds need a manager')
    await denyDialog.getByRole('button', { name: 'Deny', exact: true }).click()
    await denyDialog.waitFor({ state: 'detached' })
    await row('A-1').getByText('denied').waitFor()
    await row('A-1').getByText('“Refunds need a manager”').waitFor()
    const denied = (await rest('GET', `/approvals/${approvals['A-1']}`)).body.data
    expect(denied).toMatchObject({ status: 'denied', reason: 'Refunds need a manager', decided_by: { name: 'Grace Approver' } })

    // Edited arguments the tool's schema refuses are answered at the field; valid ones are approved.
    await row('A-2').getByRole('button', { name: 'Approve refund' }).click()
    const approveDialog = page.getByRole('dialog', { name: 'Approve refund?' })
    const args = approveDialog.getByRole('textbox', { name: 'Arguments' })
    expect(JSON.parse(await args.inputValue())).toEqual({ order: 'A-2' })
    await args.fill('{"order": "A-2", "amount": "lots"}')
    await approveDialog.getByRole('button', { name: 'Approve', exact: true }).click()
    await approveDialog.getByText(/arguments\.amount/).waitFor()
    await expect.poll(() => args.getAttribute('aria-invalid')).toBe('true')
    expect((await rest('GET', `/approvals/${approvals['A-2']}`)).body.data.status).toBe('pending')
    await args.fill('{"order": "A-2", "amount": 20}')
    await approveDialog.getByRole('button', { name: 'Approve', exact: true }).click()
    await approveDialog.waitFor({ state: 'detached' })
    await row('A-2').getByText('approved').waitFor()
    const approved = (await rest('GET', `/approvals/${approvals['A-2']}`)).body.data
    expect(approved).toMatchObject({ status: 'approved', arguments: { order: 'A-2', amount: 20 } })

    // Decided elsewhere while the dialog is open: the 409 is said there, and the row shows the outcome.
    await row('A-3').getByRole('button', { name: 'Approve refund' }).click()
    const lateDialog = page.getByRole('dialog', { name: 'Approve refund?' })
    expect((await rest('POST', `/approvals/${approvals['A-3']}/deny`, { reason: 'Done by phone' })).status).toBe(200)
    await lateDialog.getByRole('button', { name: 'Approve', exact: true }).click()
    await lateDialog.getByRole('alert').getByText('Already decided').waitFor()
    await t.screenshot(page, 'approvals-conflict')
    await lateDialog.getByRole('button', { name: 'Close' }).click()
    await row('A-3').getByText('“Done by phone”').waitFor()
    expect((await rest('GET', `/approvals/${approvals['A-3']}`)).body.data.status).toBe('denied')

    // Read again, nothing is pending; all three show under "All".
    await page.reload()
    await page.getByText('Nothing waits for you').waitFor()
    await page.getByText('All', { exact: true }).click()
    for (const order of ['A-1', 'A-2', 'A-3']) await row(order).waitFor()
  }, 90_000)
})
