/**
 * The agent screen's versions in a real browser (docs/api/versions.md, docs/console.md): an
 * agent changed over the API shows its current version by the title and its versions with what
 * changed; a note too long is refused at its field with the service's message, then saved; a
 * version opened shows its snapshot and is restored after a confirmation, the form showing the
 * restored instruction and the list the new version "restored from version 1"; more than 20
 * versions page; a reader sees the versions, and a note or a restore says in words that it needs
 * write permission; the reader exports the agent (a download) and imports the document as a file,
 * seeing the service's warning and the new agent. Each stored change is checked over REST.
 */
import { readFile } from 'node:fs/promises'
import type { Locator, Page } from 'playwright-core'
import { expect, it } from 'vitest'
import { describeConsole, type ConsoleUser } from '../helpers/console.ts'

/** The messages describing a control (its description and error), as a screen reader reads them. */
async function describedText(page: Page, control: Locator): Promise<string> {
  const ids = ((await control.getAttribute('aria-describedby')) ?? '').split(/\s+/).filter(Boolean)
  const texts = await Promise.all(ids.map((id) => page.locator(`[id="${id}"]`).textContent()))
  return texts.join(' ')
}

describeConsole('web console: agent versions', (t) => {
  const api = async (user: ConsoleUser, method: string, path: string, body?: Record<string, unknown>) => {
    const res = await t.server.http(method, `/api/v1${path}`, { token: user.token, body })
    if (res.status >= 300) throw new Error(`${method} ${path} answered ${res.status}: ${JSON.stringify(res.body)}`)
    return res.body as { data: Record<string, unknown> & { version: number } }
  }

  it('lists versions, edits a note, restores version 1 into the form, pages, tells a reader why not, exports and imports', async () => {
    const owner = await t.user('Version Owner')
    const reader = await t.user('Version Reader')
    const created = await api(owner, 'POST', '/agents', {
      name: 'Versioned helper',
      instruction: 'First instruction.',
      metadata: { role: 'Guide' },
    })
    const uuid = created.data.uuid as string
    await api(owner, 'PUT', `/agents/${uuid}`, { instruction: 'Second instruction.' })
    const third = await api(owner, 'PUT', `/agents/${uuid}`, { description: 'Now with a description', metadata: { role: 'Mentor' } })
    expect(third.data.version).toBe(3)

    const page = await t.newPage()
    await t.open(page, owner, `/agents/${uuid}`)
    await page.getByRole('heading', { name: 'Versioned helper' }).waitFor()
    await page.getByText('v3', { exact: true }).first().waitFor()
    const versions = page.getByRole('table', { name: 'Versions' })
    const row = (n: number) => versions.getByRole('row').filter({ has: page.getByText(`v${n}`, { exact: true }) })
    await row(1).waitFor()
    expect(await versions.getByRole('row').count()).toBe(4) // the heading row and three versions, newest first
    expect(await versions.getByRole('row').nth(1).textContent()).toMatch(/^v3current/)
    expect(await row(1).textContent()).toContain('Created')
    expect(await row(2).textContent()).toContain('Instruction')
    expect(await row(3).textContent()).toContain('Description and metadata')
    expect(await row(3).textContent()).toContain('Version Owner')

    // A note over 2,000 characters: the service's 400 at the field, nothing stored; then a note saved.
    await row(2).getByRole('button', { name: 'Edit the note of version 2' }).click()
    const note = row(2).getByRole('textbox', { name: 'Note of version 2' })
    await note.fill('n'.repeat(2001))
    await row(2).getByRole('button', { name: 'Save note' }).click()
    await expect.poll(() => note.getAttribute('aria-invalid')).toBe('true')
    expect(await describedText(page, note)).toMatch(/2,?000/)
    expect((await api(owner, 'GET', `/agents/${uuid}/versions/2`)).data.note).toBeNull()
    await note.fill('Tightened the wording')
    await row(2).getByRole('button', { name: 'Save note' }).click()
    // Saved: the form closes (the text alone may be found in the textarea before the answer is back).
    await note.waitFor({ state: 'detached' })
    await row(2).getByText('Tightened the wording').waitFor()
    expect((await api(owner, 'GET', `/agents/${uuid}/versions/2`)).data.note).toBe('Tightened the wording')

    // Version 1 opened: its snapshot; restored after a confirmation.
    await row(1).getByRole('button', { name: 'Open version 1' }).click()
    const opened = page.getByRole('dialog', { name: 'Version 1' })
    await opened.getByText('First instruction.').waitFor()
    expect(await opened.getByRole('table', { name: 'Metadata of this version' }).textContent()).toContain('roleGuide')
    expect(await opened.textContent()).toContain('Tools (0)')
    await t.screenshot(page, 'agent-version-open')
    await opened.getByRole('button', { name: 'Restore this version' }).click()
    const confirm = page.getByRole('dialog', { name: 'Restore version 1?' })
    await confirm.getByRole('button', { name: 'Restore version 1' }).click()
    await confirm.waitFor({ state: 'hidden' })

    // The form starts again from the restored agent; the restore is the new version, with its note.
    await expect.poll(() => page.getByRole('textbox', { name: 'Instruction', exact: true }).inputValue()).toBe('First instruction.')
    await expect.poll(() => page.getByRole('textbox', { name: 'Description' }).inputValue()).toBe('')
    await page.getByText('v4', { exact: true }).first().waitFor()
    await row(4).getByText('restored from version 1').waitFor()
    expect(await row(4).textContent()).toContain('Description, instruction and metadata')
    await t.screenshot(page, 'agent-versions')
    const restored = await api(owner, 'GET', `/agents/${uuid}`)
    expect(restored.data).toMatchObject({ version: 4, instruction: 'First instruction.', description: '', metadata: { role: 'Guide' } })

    // More than 20 versions page; a reader (read share) sees them all.
    for (let n = 5; n <= 22; n++) await api(owner, 'PUT', `/agents/${uuid}`, { instruction: `Instruction ${n}.` })
    const readerId = (await api(reader, 'GET', '/user')).data.id as number
    await api(owner, 'POST', `/agents/${uuid}/share`, { entity_type: 'user', entity_id: readerId, permission: 'read' })
    await t.open(page, reader, `/agents/${uuid}`)
    await page.getByText('Shared with you').waitFor()
    await row(22).waitFor()
    expect(await row(1).count()).toBe(0)
    await page.getByRole('button', { name: 'next page' }).click()
    await row(1).waitFor()

    // Its note and restore attempts are refused in words; nothing changes.
    await row(1).getByRole('button', { name: 'Edit the note of version 1' }).click()
    await row(1).getByRole('textbox', { name: 'Note of version 1' }).fill('Not mine to write')
    await row(1).getByRole('button', { name: 'Save note' }).click()
    const noteRefused = row(1).getByRole('alert').filter({ hasText: 'Not allowed to change this note' })
    await noteRefused.waitFor()
    expect(await noteRefused.textContent()).toMatch(/write permission/)
    await row(1).getByRole('button', { name: 'Open version 1' }).click()
    await page.getByRole('dialog', { name: 'Version 1' }).getByRole('button', { name: 'Restore this version' }).click()
    const readerConfirm = page.getByRole('dialog', { name: 'Restore version 1?' })
    await readerConfirm.getByRole('button', { name: 'Restore version 1' }).click()
    const restoreRefused = readerConfirm.getByRole('alert').filter({ hasText: 'Not allowed to restore this version' })
    await restoreRefused.waitFor()
    expect(await restoreRefused.textContent()).toMatch(/write permission/)
    await t.screenshot(page, 'agent-versions-read-only')
    const after = await api(owner, 'GET', `/agents/${uuid}`)
    expect(after.data).toMatchObject({ version: 22, instruction: 'Instruction 22.' })
    expect((await api(owner, 'GET', `/agents/${uuid}/versions/1`)).data.note).toBeNull()

    await readerConfirm.getByRole('button', { name: 'Cancel' }).click()
    await readerConfirm.waitFor({ state: 'hidden' })

    // Export (read permission is enough): the document downloaded as a file.
    const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: 'Export', exact: true }).click()])
    expect(download.suggestedFilename()).toBe('versioned-helper.agent.json')
    const document = JSON.parse(await readFile((await download.path())!, 'utf8')) as {
      format: string
      agent: Record<string, unknown>
      knowledge: unknown[]
    }
    expect(document).toMatchObject({ format: 'agent-workspace.agent', agent: { name: 'Versioned helper', instruction: 'Instruction 22.' } })

    // Import it as a file, with a file knowledge document (files do not travel: a warning), then open it.
    document.knowledge.push({ name: 'manual.pdf', source_type: 'file' })
    await page.getByRole('link', { name: '← Agents' }).click()
    await page.getByRole('button', { name: 'Import', exact: true }).click()
    const importing = page.getByRole('dialog', { name: 'Import an agent' })
    await importing
      .locator('input[type="file"]')
      .setInputFiles({ name: 'helper.agent.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(document)) })
    await expect.poll(() => importing.getByRole('textbox', { name: 'Document (JSON)' }).inputValue()).toContain('Instruction 22.')
    await importing.getByRole('button', { name: 'Import agent' }).click()
    const warnings = importing.getByRole('list', { name: '1 warning' })
    await warnings.waitFor()
    expect(await warnings.textContent()).toContain('manual.pdf')
    await t.screenshot(page, 'agent-import')
    await importing.getByRole('link', { name: 'Open the agent' }).click()
    await page.waitForURL((url) => /\/console\/agents\/[0-9a-f-]{36}$/.test(url.pathname) && !url.pathname.endsWith(uuid))
    const imported = await api(reader, 'GET', `/agents/${page.url().split('/').pop()}`)
    expect(imported.data).toMatchObject({ name: 'Versioned helper', instruction: 'Instruction 22.', version: 1, is_owner: true })
    await page.getByText('v1', { exact: true }).first().waitFor()
    expect(await page.getByRole('textbox', { name: 'Instruction', exact: true }).inputValue()).toBe('Instruction 22.')
  })
})
