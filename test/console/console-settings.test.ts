/**
 * The console's settings in a real browser (docs/console.md, "Settings"): an account with a key
 * for the OpenAI provider added on the model keys screen, after which only its masked hint is
 * shown (and the service never answers the key); an empty name refused at its field; an api tool
 * that requires approval; a workspace created and switched to, the header's switcher listing it;
 * the agent form's links to the model keys and the tools screens; a second user added as a member
 * by e-mail and their role changed; that member, back to the member role, told in words that they
 * may not add anyone; the sign-in methods. Each stored change is checked over REST.
 */
import { expect, it } from 'vitest'
import { describeConsole } from '../helpers/console.ts'

const SECRET = 'sk-settings-test-0123456789abcdef'

describeConsole('web console: settings', (t) => {
  it('adds a key, a tool and a workspace, then manages its members', async () => {
    const owner = await t.user('Settings Owner')
    const api = (method: string, path: string, body?: Record<string, unknown>, workspace?: string) =>
      t.server.http(method, `/api/v1${path}`, {
        token: owner.token,
        body,
        headers: workspace ? { 'x-workspace-uuid': workspace } : undefined,
      })
    const page = await t.newPage()
    await t.open(page, owner, '/agents')
    await page.getByRole('navigation', { name: 'Sections' }).getByRole('link', { name: 'Settings' }).click()
    await page.waitForURL((url) => url.pathname === '/console/settings/model-keys')

    // A model without a credential offers a key for its provider.
    const models = page.getByRole('table', { name: 'Models' })
    await models.getByRole('button', { name: 'Add a key for Claude Sonnet 4.5' }).waitFor()

    // An empty name is refused at its field; nothing is stored.
    await page.getByRole('button', { name: 'New account' }).click()
    const dialog = page.getByRole('dialog', { name: 'New account' })
    await dialog.getByRole('combobox', { name: 'Provider' }).click()
    await page.getByRole('option', { name: 'OpenAI (models)' }).click()
    await dialog.getByLabel('Secret', { exact: true }).fill(SECRET)
    await dialog.getByRole('button', { name: 'Add account' }).click()
    const nameField = dialog.getByRole('textbox', { name: 'Name' })
    await expect.poll(() => nameField.getAttribute('aria-invalid')).toBe('true')
    await dialog.getByText('must not be blank').waitFor()
    expect((await api('GET', '/accounts')).body.data).toHaveLength(0)
    await t.screenshot(page, 'settings-account-invalid')

    // Saved with a name: the list shows the masked hint only.
    await nameField.fill('Team OpenAI')
    await dialog.getByRole('button', { name: 'Add account' }).click()
    await dialog.waitFor({ state: 'detached' })
    const accounts = page.getByRole('table', { name: 'Accounts' })
    const accountRow = accounts.getByRole('row', { name: /Team OpenAI/ })
    await accountRow.getByText('sk-...cdef').waitFor()
    expect(await page.content()).not.toContain(SECRET)
    const listed = await api('GET', '/accounts')
    expect(listed.body.data).toHaveLength(1)
    expect(listed.body.data[0]).toMatchObject({
      name: 'Team OpenAI',
      provider: { slug: 'openai' },
      has_secret: true,
      secret_hint: 'sk-...cdef',
    })
    expect(JSON.stringify(listed.body)).not.toContain(SECRET)
    const one = await api('GET', `/accounts/${listed.body.data[0].uuid}`)
    expect(JSON.stringify(one.body)).not.toContain(SECRET)

    // Edited: the dialog shows only the hint, and an empty secret keeps the stored one.
    await accountRow.getByRole('button', { name: 'Edit Team OpenAI' }).click()
    const editing = page.getByRole('dialog', { name: 'Edit Team OpenAI' })
    await editing.getByText('Stored: sk-...cdef').waitFor()
    expect(await editing.getByLabel('Secret', { exact: true }).inputValue()).toBe('')
    await editing.getByRole('textbox', { name: 'Name' }).fill('Team OpenAI key')
    await editing.getByRole('button', { name: 'Save account' }).click()
    await accounts
      .getByRole('row', { name: /Team OpenAI key/ })
      .getByText('sk-...cdef')
      .waitFor()
    expect((await api('GET', '/accounts')).body.data[0]).toMatchObject({
      name: 'Team OpenAI key',
      has_secret: true,
      secret_hint: 'sk-...cdef',
    })
    await t.screenshot(page, 'settings-model-keys')
    await page.setViewportSize({ width: 360, height: 740 })
    await expect
      .poll(() => page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth'))
      .toBeLessThanOrEqual(0)
    await t.screenshot(page, 'settings-model-keys-360')
    await page.setViewportSize({ width: 1280, height: 800 })

    // An api tool whose calls wait for an approval.
    await page.getByRole('tab', { name: 'Tools' }).click()
    await page.getByText('No tools yet').waitFor()
    await page.getByRole('button', { name: 'New tool' }).click()
    const toolDialog = page.getByRole('dialog', { name: 'New tool' })
    await toolDialog.getByRole('textbox', { name: 'Name' }).fill('Weather')
    await toolDialog.getByRole('textbox', { name: 'Description' }).fill('The weather of a city')
    await toolDialog.getByRole('combobox', { name: 'Method' }).click()
    await page.getByRole('option', { name: 'POST' }).click()
    await toolDialog.getByRole('textbox', { name: 'URL' }).fill('https://api.example.com/weather/{{city}}')
    await toolDialog.getByRole('switch', { name: 'Requires approval' }).check()
    await toolDialog.getByRole('button', { name: 'Create tool' }).click()
    await toolDialog.waitFor({ state: 'detached' })
    const toolRow = page.getByRole('table', { name: 'Tools' }).getByRole('row', { name: /Weather/ })
    await toolRow.getByText('requires approval').waitFor()
    const tools = (await api('GET', '/tools')).body.data
    expect(tools).toHaveLength(1)
    expect(tools[0]).toMatchObject({
      name: 'Weather',
      type: 'api',
      method: 'POST',
      url: 'https://api.example.com/weather/{{city}}',
      requires_approval: true,
      idempotent: false,
    })
    await t.screenshot(page, 'settings-tools')

    // A new workspace, switched to: the header's switcher holds it.
    await page.getByRole('tab', { name: 'Workspaces' }).click()
    await page.getByRole('textbox', { name: 'New workspace' }).fill('Second Space')
    await page.getByRole('button', { name: 'Create workspace' }).click()
    const workspaces = page.getByRole('table', { name: 'Workspaces' })
    await workspaces.getByRole('button', { name: 'Switch to Second Space' }).click()
    await workspaces
      .getByRole('row', { name: /Second Space/ })
      .getByText('current')
      .waitFor()
    await expect.poll(() => page.getByRole('combobox', { name: 'Workspace' }).inputValue()).toBe('Second Space')
    const second = ((await api('GET', '/workspaces')).body.data as { uuid: string; name: string; is_owner: boolean }[]).find(
      (w) => w.name === 'Second Space',
    )
    expect(second).toMatchObject({ is_owner: true })
    expect(await page.evaluate(() => localStorage.getItem('aw.console.workspace'))).toBe(second!.uuid)
    await t.screenshot(page, 'settings-workspaces')

    // The agent form: no tools in this workspace links to the tools screen; a model without a key to the keys.
    await page.goto(`${t.server.url}/console/agents/new`)
    await page.getByRole('button', { name: /Tools and capabilities/ }).click()
    await page.getByRole('link', { name: 'Create a tool in Settings' }).waitFor()
    await page.getByRole('link', { name: 'Add a key' }).click()
    await page.waitForURL((url) => url.pathname === '/console/settings/model-keys')

    // A second user added by e-mail, their role changed.
    const member = await t.user('Settings Member')
    await page.getByRole('tab', { name: 'Members' }).click()
    await page.getByRole('heading', { name: 'Members of Second Space' }).waitFor()
    await page.getByRole('textbox', { name: 'E-mail of a user of this service' }).fill(member.email)
    await page.getByRole('button', { name: 'Add member' }).click()
    const members = page.getByRole('table', { name: 'Members' })
    const roleOf = members.getByRole('combobox', { name: `Role of ${member.email}` })
    await expect.poll(() => roleOf.inputValue()).toBe('member')
    await roleOf.click()
    await page.getByRole('option', { name: 'admin', exact: true }).click()
    const roleNow = async () =>
      ((await api('GET', `/workspaces/${second!.uuid}/members`)).body.data as { user: { email: string }; role: string }[]).find(
        (m) => m.user.email === member.email,
      )?.role
    await expect.poll(roleNow).toBe('admin')
    await t.screenshot(page, 'settings-members')
    await roleOf.click()
    await page.getByRole('option', { name: 'member', exact: true }).click()
    await expect.poll(roleNow).toBe('member')

    // The member, in that workspace, is told in words that they may not add anyone; nothing is stored.
    const memberPage = await t.newPage()
    await t.open(memberPage, member, '/agents')
    await memberPage.evaluate((uuid) => localStorage.setItem('aw.console.workspace', uuid), second!.uuid)
    await memberPage.goto(`${t.server.url}/console/settings/members`)
    await memberPage.getByText('You may not manage members here').waitFor()
    await memberPage.getByRole('textbox', { name: 'E-mail of a user of this service' }).fill(owner.email)
    await memberPage.getByRole('button', { name: 'Add member' }).click()
    const refused = memberPage.getByRole('alert').filter({ hasText: 'Not allowed' })
    await refused.getByText('You do not have permission for this.').waitFor()
    expect(await roleNow()).toBe('member')
    await t.screenshot(memberPage, 'settings-members-forbidden')

    // The sign-in methods: password on, no single sign-on on this server.
    await memberPage.getByRole('tab', { name: 'Sign-in methods' }).click()
    await memberPage.getByText('E-mail and password').waitFor()
    await memberPage.getByText('Not configured').waitFor()
    await t.screenshot(memberPage, 'settings-sign-in')
  }, 150_000)
})
