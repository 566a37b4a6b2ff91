/**
 * The console's webhooks screens in a real browser (docs/console.md): an endpoint for a receiver
 * on loopback made on the screen with two event types, its signing secret shown once; a ping
 * followed to its succeeded delivery, which the `standardwebhooks` package verifies with that
 * secret; the deliveries filtered by status; the secret rotated (the new one shown once) and the
 * ping redelivered with the same `webhook-id`, signed with both secrets; the endpoint disabled,
 * then deleted after a confirmation; a member of the workspace told in words that only owners
 * and admins manage webhooks. Each stored change is checked over REST.
 */
import { Webhook } from 'standardwebhooks'
import { afterAll, beforeAll, expect, it } from 'vitest'
import { describeConsole } from '../helpers/console.ts'
import { startReceiver, type Receiver } from '../helpers/webhook-receiver.ts'

/** The event a received request carries, verified with `secret` (throws when the signature does not match). */
const verified = (secret: string, received: { headers: Record<string, string>; body: string }) =>
  new Webhook(secret).verify(received.body, received.headers) as { type: string; data: Record<string, unknown> }

describeConsole(
  'web console: webhooks',
  (t) => {
    let receiver: Receiver
    beforeAll(async () => {
      receiver = await startReceiver()
    })
    afterAll(async () => {
      await receiver?.close()
    })

    it('creates an endpoint, shows its secret once, pings, redelivers after a rotation, disables and deletes it', async () => {
      const owner = await t.user('Hook Owner')
      const api = (method: string, path: string, body?: Record<string, unknown>) =>
        t.server.http(method, `/api/v1${path}`, { token: owner.token, body })
      const page = await t.newPage()
      await t.open(page, owner, '/agents')
      await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Webhooks' }).click()
      await page.getByText('No webhook endpoints').waitFor()

      // Created with two event types picked in place of "All events"; the secret is shown once.
      await page.getByRole('button', { name: 'New endpoint' }).click()
      const dialog = page.getByRole('dialog', { name: 'New webhook endpoint' })
      await dialog.getByRole('textbox', { name: 'URL' }).fill(receiver.url)
      await dialog.getByRole('textbox', { name: 'Description' }).fill('Build notifier')
      await dialog.getByRole('combobox', { name: 'Event types' }).click()
      await page.getByRole('option', { name: 'run.failed' }).click()
      await page.getByRole('option', { name: 'webhook_endpoint.ping' }).click()
      await dialog.getByRole('combobox', { name: 'Event types' }).press('Escape')
      await dialog.getByRole('button', { name: 'Create endpoint' }).click()
      const created = page.getByRole('dialog', { name: 'Endpoint created' })
      await created.getByText('it is never shown again').waitFor()
      await created.getByRole('button', { name: 'Copy secret' }).waitFor()
      const secret = await created.getByRole('textbox', { name: 'Signing secret' }).inputValue()
      expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/)
      await t.screenshot(page, 'webhook-created')
      await created.getByRole('button', { name: 'Done' }).click()
      await created.waitFor({ state: 'detached' })
      expect(await page.content()).not.toContain(secret.slice(6))

      const listed = await api('GET', '/webhook-endpoints')
      expect(listed.body.data).toHaveLength(1)
      const endpoint = listed.body.data[0]
      expect(endpoint).toMatchObject({
        url: receiver.url,
        description: 'Build notifier',
        event_types: ['run.failed', 'webhook_endpoint.ping'],
        is_active: true,
      })
      const row = page.getByRole('row', { name: /Build notifier/ })
      await row.getByText('webhook_endpoint.ping').waitFor()
      await row.getByText('active', { exact: true }).waitFor()

      // A ping opens its delivery, which succeeds; the receiver got it signed with the secret.
      await row.getByRole('button', { name: `Ping ${receiver.url}` }).click()
      await page.waitForURL((url) => url.pathname === `/console/webhooks/${endpoint.uuid}` && url.searchParams.has('delivery'))
      const deliveryUuid = new URL(page.url()).searchParams.get('delivery')!
      const panel = page.getByRole('region', { name: 'Delivery of webhook_endpoint.ping' })
      const attempts = panel.getByRole('table', { name: 'Attempts' })
      await attempts.getByText('HTTP 200').waitFor()
      await panel.getByText('succeeded', { exact: true }).waitFor()
      const deliveries = page.getByRole('table', { name: 'Deliveries' })
      await deliveries
        .getByRole('row', { name: /succeeded/ })
        .getByText('HTTP 200')
        .waitFor()
      const [first] = await receiver.waitFor(1)
      const event = verified(secret, first)
      expect(event.type).toBe('webhook_endpoint.ping')
      expect(event.data.uuid).toBe(endpoint.uuid)
      expect(first.headers['webhook-id']).toBe(await panel.getByText(/^[0-9a-f-]{36}$/).textContent())
      await t.screenshot(page, 'webhook-deliveries')

      // Filtered by status: nothing failed; the succeeded ping again.
      await page.getByRole('combobox', { name: 'Status' }).click()
      await page.getByRole('option', { name: 'failed' }).click()
      await page.getByText('No delivery matches').waitFor()
      await page.getByRole('combobox', { name: 'Status' }).click()
      await page.getByRole('option', { name: 'succeeded' }).click()
      await deliveries.getByRole('row', { name: /webhook_endpoint\.ping/ }).waitFor()

      // The secret rotated from the list: the new one shown once.
      await page.getByRole('link', { name: '← All endpoints' }).click()
      await row.getByRole('button', { name: `Rotate the secret of ${receiver.url}` }).click()
      await page.getByRole('dialog', { name: 'Rotate the signing secret?' }).getByRole('button', { name: 'Rotate secret' }).click()
      const rotated = page.getByRole('dialog', { name: 'Secret rotated' })
      const newSecret = await rotated.getByRole('textbox', { name: 'New signing secret' }).inputValue()
      expect(newSecret).toMatch(/^whsec_/)
      expect(newSecret).not.toBe(secret)
      await rotated.getByText('The previous secret signs each delivery too for 24 hours').waitFor()
      await rotated.getByRole('button', { name: 'Done' }).click()
      await rotated.waitFor({ state: 'detached' })

      // Redelivered: a second attempt with the same webhook-id, signed with both secrets.
      await row.getByRole('link', { name: `Deliveries of ${receiver.url}` }).click()
      await deliveries.getByRole('button', { name: /^Details of the webhook_endpoint\.ping delivery/ }).click()
      await panel.getByRole('button', { name: 'Redeliver' }).click()
      await expect.poll(() => attempts.getByText('HTTP 200').count(), { timeout: 20_000 }).toBe(2)
      await deliveries
        .getByRole('row', { name: /succeeded/ })
        .getByRole('cell', { name: '2', exact: true })
        .waitFor()
      const [, second] = await receiver.waitFor(2)
      expect(second.headers['webhook-id']).toBe(first.headers['webhook-id'])
      expect(verified(newSecret, second).type).toBe('webhook_endpoint.ping')
      expect(verified(secret, second).type).toBe('webhook_endpoint.ping')
      const delivery = await api('GET', `/webhook-deliveries/${deliveryUuid}`)
      expect(delivery.body.data).toMatchObject({ status: 'succeeded', attempts: [{ status_code: 200 }, { status_code: 200 }] })

      // Disabled, then deleted after a confirmation; both screens fit 360 px.
      await page.getByRole('link', { name: '← All endpoints' }).click()
      await row.getByRole('button', { name: `Disable ${receiver.url}` }).click()
      await row.getByText('Disabled by hand').waitFor()
      await row.getByRole('button', { name: `Enable ${receiver.url}` }).waitFor()
      expect((await api('GET', `/webhook-endpoints/${endpoint.uuid}`)).body.data).toMatchObject({ is_active: false, disabled_reason: null })
      await page.setViewportSize({ width: 360, height: 740 })
      await expect
        .poll(() => page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth'))
        .toBeLessThanOrEqual(0)
      await t.screenshot(page, 'webhooks-360')
      await page.setViewportSize({ width: 1280, height: 800 })
      await t.screenshot(page, 'webhooks')
      await row.getByRole('button', { name: `Delete ${receiver.url}` }).click()
      await page.getByRole('dialog', { name: 'Delete this endpoint?' }).getByRole('button', { name: 'Delete endpoint' }).click()
      await page.getByText('No webhook endpoints').waitFor()
      expect((await api('GET', `/webhook-endpoints/${endpoint.uuid}`)).status).toBe(404)
      expect((await api('GET', `/webhook-deliveries/${deliveryUuid}`)).status).toBe(404)

      // A member of the workspace is told why not, and offered nothing to create.
      const member = await t.user('Hook Member')
      expect((await api('POST', `/workspaces/${owner.workspaceUuid}/members`, { email: member.email, role: 'member' })).status).toBe(201)
      await t.open(page, member, '/agents')
      await page.evaluate((uuid) => localStorage.setItem('aw.console.workspace', uuid), owner.workspaceUuid)
      await page.goto(`${t.server.url}/console/webhooks`)
      const refused = page.getByRole('alert').filter({ hasText: 'Not allowed' })
      await refused.getByText('may not manage webhooks').waitFor()
      expect(await page.getByRole('button', { name: 'New endpoint' }).count()).toBe(0)
      await t.screenshot(page, 'webhooks-forbidden')
    }, 120_000)
  },
  { WEBHOOK_ALLOW_PRIVATE_NETWORK: 'true' },
)
