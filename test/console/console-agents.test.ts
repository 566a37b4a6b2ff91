/**
 * The console's agent screens in a real browser: the list, creating an agent (a double click makes
 * one; a lost answer is sent again with its Idempotency-Key and replayed), editing its fields
 * (metadata and bindings included), a 400's issues at their fields, sharing, favourites, deleting,
 * someone else's agent (404 in words), an agent shared read-only (403 in words on save), and a
 * 255-character name at 360 px. Each stored change is checked over REST.
 */
import type { Page } from 'playwright-core'
import { expect, it } from 'vitest'
import { describeConsole, type ConsoleUser } from '../helpers/console.ts'

const UUID = /\/console\/agents\/([0-9a-f-]{36})$/

describeConsole('web console: agents', (t) => {
  /** The agent as the service stores it, read by `user`. */
  const stored = async (user: ConsoleUser, uuid: string) => t.server.http('GET', `/api/v1/agents/${uuid}`, { token: user.token })
  const makeAgent = async (user: ConsoleUser, body: Record<string, unknown>) => {
    const res = await t.server.http('POST', '/api/v1/agents', { token: user.token, body })
    expect(res.status).toBe(201)
    return res.body.data as { uuid: string; name: string }
  }
  const horizontalOverflow = (page: Page) =>
    page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth')
  /** Opens a section of the agent form (a collapsed accordion item). */
  const openSection = async (page: Page, name: string) => {
    const control = page.getByRole('button', { name, exact: true })
    if ((await control.getAttribute('aria-expanded')) !== 'true') await control.click()
  }

  it('creates an agent on the screen with its name, instruction and model, and lists it', async () => {
    const user = await t.user()
    const page = await t.newPage()
    await t.open(page, user, '/agents')
    await page.getByRole('link', { name: 'New agent' }).click()
    await page.getByRole('heading', { name: 'New agent' }).waitFor()
    await page.getByRole('textbox', { name: 'Name' }).fill('Support helper')
    await page.getByRole('textbox', { name: 'Instruction', exact: true }).fill('Answer support questions politely.')
    await page.getByRole('combobox', { name: 'Model' }).click()
    await page.getByRole('option', { name: 'GPT-4o mini', exact: true }).click()
    await t.screenshot(page, 'agent-create')
    // The first answer is lost on its way back (the service made the agent): the client sends the
    // same submission again with its Idempotency-Key and the service replays its answer.
    const creates: { key?: string; replayed?: string }[] = []
    await page.route('**/trpc/agents.create**', async (route) => {
      const response = await route.fetch()
      creates.push({ key: route.request().headers()['idempotency-key'], replayed: response.headers()['idempotent-replayed'] })
      if (creates.length === 1) await route.abort('connectionreset')
      else await route.fulfill({ response })
    })
    // A double click in one task, before the button can show that it is busy.
    await page.getByRole('button', { name: 'Create agent' }).evaluate((button) => {
      ;(button as { click: () => void }).click()
      ;(button as { click: () => void }).click()
    })
    await page.waitForURL(UUID)
    const uuid = UUID.exec(page.url())![1]
    await page.getByRole('heading', { name: 'Support helper' }).waitFor()
    expect(creates).toHaveLength(2)
    expect(creates[0].key).toMatch(/^[\x20-\x7e]{1,255}$/)
    expect(creates[1]).toEqual({ key: creates[0].key, replayed: 'true' })
    const listed = await t.server.http('GET', '/api/v1/agents', { token: user.token })
    expect(listed.body.data.map((agent: { uuid: string }) => agent.uuid)).toEqual([uuid])

    const res = await stored(user, uuid)
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({
      name: 'Support helper',
      instruction: 'Answer support questions politely.',
      visibility: 'private',
      metadata: { large_language_model: 'gpt-4o-mini' },
    })

    await page.getByRole('link', { name: '← Agents' }).click()
    await page.getByRole('link', { name: 'Support helper', exact: true }).waitFor()
    await expect.poll(() => page.getByRole('row').filter({ hasText: 'Support helper' }).textContent()).toContain('gpt-4o-mini')
    await t.screenshot(page, 'agents-list')
  })

  it('edits fields, metadata and a tool binding, and keeps what the service stored', async () => {
    const user = await t.user()
    const tool = await t.server.http('POST', '/api/v1/tools', {
      token: user.token,
      body: { name: 'Weather lookup', url: 'https://example.com/weather?q={{city}}' },
    })
    expect(tool.status).toBe(201)
    const agent = await makeAgent(user, {
      name: 'Editable',
      instruction: 'Old instruction.',
      metadata: { tone_of_voice: 'dry', custom_key: 'kept' },
    })
    const page = await t.newPage()
    await t.open(page, user, `/agents/${agent.uuid}`)
    await page.getByRole('heading', { name: 'Editable' }).waitFor()

    await page.getByRole('textbox', { name: 'Description' }).fill('Answers about the weather')
    await page.getByRole('combobox', { name: 'Visibility' }).click()
    await page.getByRole('option', { name: 'Workspace', exact: true }).click()
    await openSection(page, 'Persona')
    await page.getByRole('textbox', { name: 'Role' }).fill('Meteorologist')
    await page.getByRole('textbox', { name: 'Tone of voice' }).fill('')
    await page.getByRole('combobox', { name: 'DISC personality' }).click()
    await page.getByRole('option', { name: 'Steady' }).click()
    await page.getByRole('button', { name: 'Add starter' }).click()
    await page.getByRole('textbox', { name: 'Starter 1' }).fill('Will it rain tomorrow?')
    await openSection(page, 'Tools and capabilities')
    await page.getByRole('switch', { name: 'Memory' }).check()
    await page.getByRole('button', { name: 'Add tool' }).click()
    await page.getByRole('combobox', { name: 'Tool 1' }).click()
    await page.getByRole('option', { name: 'Weather lookup' }).click()
    await t.screenshot(page, 'agent-edit')
    await page.getByRole('button', { name: 'Save', exact: true }).click()
    await page.getByText('All changes saved').waitFor()

    const res = await stored(user, agent.uuid)
    const data = res.body.data
    expect(data).toMatchObject({ description: 'Answers about the weather', visibility: 'workspace', instruction: 'Old instruction.' })
    // Changed keys set, a cleared one removed, an untouched extra key kept (the update merges).
    expect(data.metadata).toEqual({
      role: 'Meteorologist',
      disc_personality: 'steady',
      conversation_starters: ['Will it rain tomorrow?'],
      memory: true,
      custom_key: 'kept',
    })
    expect(data.tools.map((bound: { uuid: string }) => bound.uuid)).toEqual([tool.body.data.uuid])
    // The form starts again from what was stored.
    await expect.poll(() => page.getByRole('textbox', { name: 'Role' }).inputValue()).toBe('Meteorologist')

    // Favourite: the toggle says so and the service stored it for this user.
    await page.getByRole('button', { name: /Add to favourites/ }).click()
    await page.getByRole('button', { name: /Favourite/, pressed: true }).waitFor()
    expect((await stored(user, agent.uuid)).body.data.is_favorite).toBe(true)
  })

  it('shows a 400 at the fields it names, opening their sections, and stores nothing', async () => {
    const user = await t.user()
    const agent = await makeAgent(user, { name: 'Valid name', metadata: { role: 'Guide' } })
    const page = await t.newPage()
    await t.open(page, user, `/agents/${agent.uuid}`)
    await page.getByRole('heading', { name: 'Valid name' }).waitFor()
    await openSection(page, 'Persona')
    await page.getByRole('textbox', { name: 'Role' }).fill('R'.repeat(300))
    // Closed again: the 400 must open it to show its issue.
    await page.getByRole('button', { name: 'Persona', exact: true }).click()
    await page.getByRole('textbox', { name: 'Name' }).fill('   ')
    await page.getByRole('button', { name: 'Save', exact: true }).click()

    const name = page.getByRole('textbox', { name: 'Name' })
    await expect.poll(() => name.getAttribute('aria-invalid')).toBe('true')
    await page.getByText('must not be blank').waitFor()
    const role = page.getByRole('textbox', { name: 'Role' })
    await role.waitFor()
    await expect.poll(() => role.getAttribute('aria-invalid')).toBe('true')
    const describedBy = (await role.getAttribute('aria-describedby'))!.split(/\s+/).filter(Boolean)
    const messages = await Promise.all(describedBy.map((id) => page.locator(`[id="${id}"]`).textContent()))
    expect(messages.join(' ')).toMatch(/255/)
    await page.getByText('The fields marked in red need a change.').waitFor()
    await t.screenshot(page, 'agent-invalid')

    const res = await stored(user, agent.uuid)
    expect(res.body.data.name).toBe('Valid name')
    expect(res.body.data.metadata.role).toBe('Guide')
  })

  it('shares with another user, who sees it read-only and is told why a save fails', async () => {
    const owner = await t.user('Owner')
    const reader = await t.user('Reader')
    const agent = await makeAgent(owner, { name: 'Shared assistant', description: 'Original' })
    // The share dialog offers the workspace's members, found by e-mail.
    const member = await t.server.http('POST', `/api/v1/workspaces/${owner.workspaceUuid}/members`, {
      token: owner.token,
      body: { email: reader.email },
    })
    expect(member.status).toBe(201)
    const page = await t.newPage()
    await t.open(page, owner, `/agents/${agent.uuid}`)
    await page.getByRole('heading', { name: 'Shared assistant' }).waitFor()
    await page.getByRole('combobox', { name: 'User' }).fill(reader.email)
    await page.getByRole('option', { name: `Reader <${reader.email}>` }).click()
    await page.getByRole('button', { name: 'Share', exact: true }).click()
    const row = page.getByRole('row').filter({ hasText: reader.email })
    await row.waitFor()
    await expect.poll(() => row.getByRole('combobox').inputValue()).toBe('read')
    await t.screenshot(page, 'agent-share')
    const shares = (await stored(owner, agent.uuid)).body.data.shares
    expect(shares).toMatchObject([{ entity_type: 'user', permission: 'read', entity: { email: reader.email } }])

    // The reader sees it in the list and opens it: a note says it is shared; saving says why not.
    const readerPage = await t.newPage()
    await t.open(readerPage, reader, '/agents')
    await readerPage.getByRole('link', { name: 'Shared assistant', exact: true }).click()
    await readerPage.getByText('Shared with you').waitFor()
    await readerPage.getByRole('textbox', { name: 'Description' }).fill('Changed by the reader')
    await readerPage.getByRole('button', { name: 'Save', exact: true }).click()
    const alert = readerPage.getByRole('alert').filter({ hasText: 'Not allowed to change this agent' })
    await alert.waitFor()
    expect(await alert.textContent()).toMatch(/write permission/)
    await t.screenshot(readerPage, 'agent-read-only')
    expect((await stored(owner, agent.uuid)).body.data.description).toBe('Original')

    // Removing the share takes it away from the reader.
    await row.getByRole('button', { name: /Stop sharing/ }).click()
    await page.getByText('Not shared with anyone.').waitFor()
    expect((await stored(reader, agent.uuid)).status).toBe(404)
  })

  it("answers another user's private agent and a malformed address with the 404 words", async () => {
    const owner = await t.user()
    const stranger = await t.user()
    const agent = await makeAgent(owner, { name: 'Private to its owner' })
    const page = await t.newPage()
    await t.open(page, stranger, `/agents/${agent.uuid}`)
    await page.getByRole('alert').filter({ hasText: 'Not found' }).waitFor()
    expect(await page.getByText('Private to its owner').count()).toBe(0)
    await page.goto(`${t.server.url}/console/agents/not-a-uuid`)
    await page.getByRole('alert').filter({ hasText: 'Not found' }).waitFor()
  })

  it('deletes an agent after a confirmation and goes back to the list', async () => {
    const user = await t.user()
    const agent = await makeAgent(user, { name: 'To be deleted' })
    const page = await t.newPage()
    await t.open(page, user, `/agents/${agent.uuid}`)
    await page.getByRole('heading', { name: 'To be deleted' }).waitFor()
    await page.getByRole('button', { name: 'Delete', exact: true }).click()
    const dialog = page.getByRole('dialog', { name: 'Delete this agent?' })
    await dialog.waitFor()
    await dialog.getByRole('button', { name: 'Cancel' }).click()
    await dialog.waitFor({ state: 'hidden' })
    expect((await stored(user, agent.uuid)).status).toBe(200)
    await page.getByRole('button', { name: 'Delete', exact: true }).click()
    await dialog.getByRole('button', { name: 'Delete agent' }).click()
    await page.waitForURL(/\/console\/agents$/)
    await page.getByText('No agents yet').waitFor()
    expect((await stored(user, agent.uuid)).status).toBe(404)
  })

  it('fits a 255-character name at 360 px on the list and the edit screen, with a chat link', async () => {
    const user = await t.user()
    const long = `${'Averyverylongagentnamewithoutanyspaces'.repeat(6)}`.slice(0, 255)
    const agent = await makeAgent(user, { name: long, description: 'word '.repeat(300).trim() })
    const page = await t.newPage({ width: 360, height: 740 })
    await t.open(page, user, '/agents')
    await page.getByRole('link', { name: long, exact: true }).waitFor()
    expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0)
    await page.getByRole('link', { name: long, exact: true }).click()
    await page.getByRole('heading', { name: long }).waitFor()
    for (const section of ['Persona', 'Tools and capabilities', 'Photo', 'Extra metadata']) await openSection(page, section)
    await page.getByRole('button', { name: 'Add tool' }).click()
    await page.getByRole('button', { name: 'Add key' }).click()
    expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0)
    const chat = page.getByRole('main').getByRole('link', { name: 'Chat', exact: true })
    expect(await chat.getAttribute('href')).toBe(`/console/chat/${agent.uuid}`)
    await page.evaluate('window.scrollTo(0, 0)')
    await t.screenshot(page, 'agent-narrow-360')
  })
})
