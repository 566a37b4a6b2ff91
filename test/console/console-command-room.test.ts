/**
 * The console's command room in a real browser (docs/api/command-room.md): a task created on the
 * screen and checked over REST; an invalid cron expression refused at its field with nothing
 * stored; pause and resume reflected over REST; "run now" firing the agent against the local
 * model server, the firing appearing in the history with a link to its conversation; deleting
 * after a confirmation; the list at 360 px.
 */
import type { Page } from 'playwright-core'
import { beforeAll, expect, it } from 'vitest'
import { describeConsole, type ConsoleSuite, type ConsoleUser } from '../helpers/console.ts'

const TASKS = '/api/v1/command-room/tasks'

async function choose(page: Page, label: string, option: string, type?: string) {
  const box = page.getByRole('combobox', { name: label })
  await box.click()
  if (type) await box.fill(type)
  await page.getByRole('option', { name: option, exact: true }).click()
}

/** The messages that describe a field (Mantine links its error by aria-describedby). */
async function describedText(page: Page, field: ReturnType<Page['getByRole']>): Promise<string> {
  const ids = ((await field.getAttribute('aria-describedby')) ?? '').split(/\s+/).filter(Boolean)
  const texts = await Promise.all(ids.map((id) => page.locator(`[id="${id}"]`).textContent()))
  return texts.join(' ')
}

/** Half an hour ago: a recurring task anchored there does not fire while a test reads it. */
const halfHourAgo = () => new Date(Date.now() - 1_800_000).toISOString()

describeConsole('web console: command room', (t: ConsoleSuite) => {
  let user: ConsoleUser
  let agent: string

  const tasks = async () => {
    const res = await t.server.http('GET', TASKS, { token: user.token })
    expect(res.status).toBe(200)
    return res.body.data as { uuid: string; name: string; schedule: string; timezone: string; is_active: boolean; next_run_at: string | null; agent: { uuid: string } | null; input: unknown }[]
  }

  beforeAll(async () => {
    user = await t.user('Command Room Owner')
    const res = await t.server.http('POST', '/api/v1/agents', { token: user.token, body: { name: 'Digest agent', description: 'summarises' } })
    expect(res.status).toBe(201)
    agent = res.body.data.uuid
  })

  it('creates a task on the screen, refusing an invalid cron expression at its field first', async () => {
    const page = await t.newPage()
    await t.open(page, user, '/command-room')
    await page.getByText('No tasks yet').waitFor()
    await page.getByRole('button', { name: 'New task' }).click()
    const dialog = page.getByRole('dialog', { name: 'New task' })
    await dialog.getByRole('textbox', { name: 'Name' }).fill('Morning digest')
    await choose(page, 'Agent', 'Digest agent')
    await dialog.getByRole('textbox', { name: 'Message' }).fill('Summarise the news')
    await choose(page, 'Schedule', 'Cron expression')
    const cron = dialog.getByRole('textbox', { name: 'Cron expression' })
    await cron.fill('61 9 * * *')
    await choose(page, 'Time zone', 'Europe/Paris', 'Paris')
    await dialog.getByRole('button', { name: 'Create task' }).click()

    // The service's issue at `schedule` is shown at the cron field; nothing is stored.
    await expect.poll(() => cron.getAttribute('aria-invalid')).toBe('true')
    expect(await describedText(page, cron)).toContain('or use once, hourly, daily or weekly')
    expect(await tasks()).toEqual([])

    await cron.fill('0 9 * * 1-5')
    await dialog.getByRole('button', { name: 'Create task' }).click()
    await page.getByRole('heading', { name: 'Morning digest' }).waitFor()
    const stored = await tasks()
    expect(stored).toHaveLength(1)
    expect(stored[0]).toMatchObject({
      name: 'Morning digest',
      schedule: '0 9 * * 1-5',
      timezone: 'Europe/Paris',
      is_active: true,
      agent: { uuid: agent },
      input: 'Summarise the news',
    })
    expect(stored[0]!.next_run_at).not.toBeNull()
    await page.getByText('Cron 0 9 * * 1-5').waitFor()
    expect(new URL(page.url()).searchParams.get('task')).toBe(stored[0]!.uuid)
  }, 90_000)

  it('pauses and resumes a task, runs it now and shows the firing in its history', async () => {
    // Anchored half an hour ago, the hourly task next fires in about 30 minutes: the default anchor
    // (the next whole minute) fired it while the page was read, and the history was no longer empty.
    const created = await t.server.http('POST', TASKS, {
      token: user.token,
      body: { name: 'Hourly check', agent_uuid: agent, input: 'Check in', schedule: 'hourly', timezone: 'UTC', run_at: halfHourAgo() },
    })
    expect(created.status).toBe(201)
    const uuid = created.body.data.uuid as string
    const task = async () => (await t.server.http('GET', `${TASKS}/${uuid}`, { token: user.token })).body.data
    const page = await t.newPage()
    await t.open(page, user, `/command-room?task=${uuid}`)
    await page.getByRole('heading', { name: 'Hourly check' }).waitFor()
    await page.getByText('No firings yet').waitFor()

    await page.getByRole('button', { name: 'Pause', exact: true }).click()
    await page.getByRole('button', { name: 'Resume', exact: true }).waitFor()
    expect(await task()).toMatchObject({ is_active: false, next_run_at: null })
    await page.getByText('Paused', { exact: true }).waitFor()
    await page.getByRole('button', { name: 'Resume', exact: true }).click()
    await page.getByRole('button', { name: 'Pause', exact: true }).waitFor()
    const resumed = await task()
    expect(resumed.is_active).toBe(true)
    expect(resumed.next_run_at).not.toBeNull()

    await page.getByRole('button', { name: 'Run now' }).click()
    const history = page.getByRole('table', { name: 'Firing history' })
    // The agent's run against the local model server ends in a second or two; the history is read again until then.
    await history.getByText('succeeded', { exact: true }).waitFor({ timeout: 30_000 })
    const firings = await t.server.http('GET', `${TASKS}/${uuid}/firings`, { token: user.token })
    expect(firings.body.data).toHaveLength(1)
    const firing = firings.body.data[0]
    expect(firing).toMatchObject({ status: 'succeeded' })
    expect(firing.thread_uuid).toBeTruthy()
    const link = history.getByRole('link', { name: 'Open the conversation' })
    expect(await link.getAttribute('href')).toBe(`/console/chat/${agent}/${firing.thread_uuid}`)
    expect(t.upstream.requests.some((request) => JSON.stringify(request.body).includes('Check in'))).toBe(true)
    await page.getByText('last succeeded').waitFor()
    await t.screenshot(page, 'command-room-task')
  }, 90_000)

  it('edits a task into a once task whose time is read in its time zone', async () => {
    const created = await t.server.http('POST', TASKS, {
      token: user.token,
      body: { name: 'Edit me', agent_uuid: agent, input: 'Hi', schedule: 'daily', timezone: 'UTC', run_at: halfHourAgo() },
    })
    expect(created.status).toBe(201)
    const uuid = created.body.data.uuid as string
    const page = await t.newPage()
    await t.open(page, user, `/command-room?task=${uuid}`)
    await page.getByRole('heading', { name: 'Edit me' }).waitFor()
    await page.getByRole('button', { name: 'Edit', exact: true }).click()
    const dialog = page.getByRole('dialog', { name: 'Edit Edit me' })
    await dialog.getByRole('textbox', { name: 'Name' }).fill('Launch reminder')
    await choose(page, 'Schedule', 'Once')
    await choose(page, 'Time zone', 'Europe/Paris', 'Paris')
    const runAt = dialog.getByRole('textbox', { name: 'Run at' })
    await runAt.fill('2030-01-15 09:30')
    await runAt.press('Tab')
    await dialog.getByRole('button', { name: 'Save changes' }).click()
    await page.getByRole('heading', { name: 'Launch reminder' }).waitFor()
    const stored = (await t.server.http('GET', `${TASKS}/${uuid}`, { token: user.token })).body.data
    // 09:30 in Paris in January (UTC+1).
    expect(stored).toMatchObject({ name: 'Launch reminder', schedule: 'once', timezone: 'Europe/Paris', run_at: '2030-01-15T08:30:00.000Z', input: 'Hi' })
    await page.getByText(/^Once, .*2030/).waitFor()
  }, 90_000)

  it('lists the tasks, deletes one after confirming, and fits 360 px', async () => {
    const created = await t.server.http('POST', TASKS, {
      token: user.token,
      body: { name: 'A task with a very long name that keeps going well past what any table column could show', agent_uuid: agent, schedule: 'daily', timezone: 'Asia/Tokyo', run_at: halfHourAgo() },
    })
    expect(created.status).toBe(201)
    const page = await t.newPage()
    await t.open(page, user, '/command-room')
    const table = page.getByRole('table', { name: 'Tasks' })
    await table.getByRole('link', { name: 'Morning digest' }).waitFor()
    await table.getByText('Asia/Tokyo').waitFor()
    await t.screenshot(page, 'command-room')

    await table.getByRole('link', { name: /^A task with a very long name/ }).click()
    await page.getByRole('button', { name: 'Delete' }).click()
    await page.getByRole('dialog', { name: 'Delete this task?' }).getByRole('button', { name: 'Delete task' }).click()
    await page.getByRole('heading', { name: 'Command room' }).waitFor()
    const gone = await t.server.http('GET', `${TASKS}/${created.body.data.uuid}`, { token: user.token })
    expect(gone.status).toBe(404)
    await expect.poll(() => table.getByRole('link', { name: /^A task with a very long name/ }).count()).toBe(0)

    const narrow = await t.newPage({ width: 360, height: 740 })
    await t.open(narrow, user, '/command-room')
    await narrow.getByRole('table', { name: 'Tasks' }).waitFor()
    expect(await narrow.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth')).toBeLessThanOrEqual(0)
    await t.screenshot(narrow, 'command-room-360')
    await narrow.getByRole('button', { name: 'New task' }).click()
    await narrow.getByRole('dialog', { name: 'New task' }).waitFor()
    expect(await narrow.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth')).toBeLessThanOrEqual(0)
    await t.screenshot(narrow, 'command-room-form-360')
  }, 90_000)
})
