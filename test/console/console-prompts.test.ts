/**
 * The console's prompt screens in a real browser: a prompt created in the list's dialog, its two
 * inputs declared from the names its template uses and its model picked on the edit screen (and
 * stored, checked over REST), run with the form built from those inputs against the local model
 * server (a required input left empty answered at its field), edited, deleted after a
 * confirmation; the list's search; a template's names proposed as the service's parser reads them,
 * an input the template does not use flagged; 360 px wide.
 */
import { expect, it } from 'vitest'
import type { Page } from 'playwright-core'
import { describeConsole } from '../helpers/console.ts'

/** The messages describing a control (its description and error), as a screen reader reads them. */
async function describedText(page: Page, control: ReturnType<Page['getByRole']>): Promise<string> {
  const ids = ((await control.getAttribute('aria-describedby')) ?? '').split(/\s+/).filter(Boolean)
  const texts = await Promise.all(ids.map((id) => page.locator(`[id="${id}"]`).textContent()))
  return texts.join(' ')
}

describeConsole('web console: prompts', (t) => {
  it('creates a prompt with two inputs, runs it with the generated form, edits and deletes it', async () => {
    const user = await t.user()
    const page = await t.newPage()
    await t.open(page, user, '/prompts')
    await page.getByText('No prompts yet').waitFor()

    // Created in the list's dialog, then opened on its edit screen.
    await page.getByRole('button', { name: 'New prompt' }).click()
    const dialog = page.getByRole('dialog', { name: 'New prompt' })
    await dialog.getByRole('textbox', { name: 'Name' }).fill('Essay writer')
    await dialog.getByRole('textbox', { name: 'Template' }).fill('Write about {{topic}}{{#tone}} in a {{tone}} tone{{/tone}}.')
    await dialog.getByRole('button', { name: 'Create prompt' }).click()
    await page.waitForURL(/\/console\/prompts\/[0-9a-f-]{36}$/)
    const uuid = page.url().split('/').pop()!
    await page.getByRole('heading', { name: 'Essay writer' }).waitFor()

    // The template's two names are proposed as inputs, each declared with one click (key and label
    // from the name): a required text and an optional select, and the model the runs use.
    const proposals = page.getByRole('region', { name: 'Proposed inputs' })
    await proposals.getByRole('button', { name: 'Declare input topic' }).click()
    await proposals.getByRole('button', { name: 'Declare input tone' }).click()
    await proposals.waitFor({ state: 'detached' })
    const first = page.getByRole('group', { name: 'Input 1' })
    expect(await first.getByRole('textbox', { name: 'Key' }).inputValue()).toBe('topic')
    expect(await first.getByRole('textbox', { name: 'Label' }).inputValue()).toBe('Topic')
    await first.getByRole('checkbox', { name: 'Required' }).check()
    const second = page.getByRole('group', { name: 'Input 2' })
    expect(await second.getByRole('textbox', { name: 'Key' }).inputValue()).toBe('tone')
    await second.getByRole('combobox', { name: 'Type' }).click()
    await page.getByRole('option', { name: 'Select (one option)' }).click()
    const options = second.getByRole('combobox', { name: 'Options' })
    await options.fill('formal')
    await options.press('Enter')
    await options.fill('casual')
    await options.press('Enter')
    await page.getByRole('combobox', { name: 'Model for runs' }).click()
    await page.getByRole('option', { name: 'GPT-4o (OpenAI)', exact: true }).click()
    await page.getByRole('textbox', { name: 'Description' }).fill('Short essays on any topic')
    await page.getByRole('button', { name: 'Save prompt' }).click()
    await page.getByText('Prompt saved').waitFor()
    await t.screenshot(page, 'prompt-edit')

    const stored = await t.server.http('GET', `/api/v1/prompts/${uuid}`, { token: user.token })
    expect(stored.status).toBe(200)
    expect(stored.body.data).toMatchObject({
      name: 'Essay writer',
      description: 'Short essays on any topic',
      content: 'Write about {{topic}}{{#tone}} in a {{tone}} tone{{/tone}}.',
      metadata: {
        input: [
          { key: 'topic', label: 'Topic', type: 'text', required: true },
          { key: 'tone', label: 'Tone', type: 'select', required: false, options: ['formal', 'casual'] },
        ],
        large_language_model: 'gpt-4o',
      },
    })

    // The run form: one control per input, the required one left empty answered at its field.
    await page.getByRole('tab', { name: 'Run' }).click()
    const topic = page.getByRole('textbox', { name: 'Topic' })
    await topic.waitFor()
    await expect.poll(() => page.getByRole('combobox', { name: 'Model' }).inputValue()).toBe('GPT-4o (OpenAI)')
    const before = t.upstream.requests.length
    await page.getByRole('button', { name: 'Run prompt' }).click()
    await page.getByText('Topic is required').waitFor()
    expect(await topic.getAttribute('aria-invalid')).toBe('true')
    expect(await describedText(page, topic)).toContain('Topic is required')
    expect(t.upstream.requests.length).toBe(before)

    await topic.fill('the tides')
    await page.getByRole('combobox', { name: 'Tone' }).click()
    await page.getByRole('option', { name: 'formal' }).click()
    await page.getByRole('button', { name: 'Run prompt' }).click()
    const answer = page.getByRole('region', { name: 'Answer' })
    await answer.getByText('Echo: Write about the tides in a formal tone.').waitFor()
    await answer.getByText('succeeded').waitFor()
    const call = t.upstream.requests.filter((request) => request.path.startsWith('/v1/chat/completions')).at(-1)!
    expect(call.body.model).toBe('gpt-4o')
    expect(JSON.stringify(call.body.messages)).toContain('Write about the tides in a formal tone.')
    await t.screenshot(page, 'prompt-run')

    // Edited: renamed, the second input removed; a bad key is answered at its field first.
    await page.getByRole('tab', { name: 'Edit' }).click()
    await page.getByRole('textbox', { name: 'Name' }).fill('Essay writer, short')
    await page.getByRole('button', { name: 'Remove input 2' }).click()
    const key = page.getByRole('group', { name: 'Input 1' }).getByRole('textbox', { name: 'Key' })
    await key.fill('1topic')
    await page.getByRole('button', { name: 'Save prompt' }).click()
    await expect.poll(() => key.getAttribute('aria-invalid')).toBe('true')
    expect(await describedText(page, key)).toMatch(/letter/)
    await key.fill('topic')
    await page.getByRole('button', { name: 'Save prompt' }).click()
    await page.getByRole('heading', { name: 'Essay writer, short' }).waitFor()
    const edited = await t.server.http('GET', `/api/v1/prompts/${uuid}`, { token: user.token })
    expect(edited.body.data.name).toBe('Essay writer, short')
    expect(edited.body.data.metadata.input).toEqual([{ key: 'topic', label: 'Topic', type: 'text', required: true }])

    // Deleted after the confirmation, back on the list.
    await page.getByRole('button', { name: 'Delete', exact: true }).click()
    await page.getByRole('dialog', { name: 'Delete this prompt?' }).getByRole('button', { name: 'Delete prompt' }).click()
    await page.waitForURL(/\/console\/prompts$/)
    await page.getByText('No prompts yet').waitFor()
    const gone = await t.server.http('GET', `/api/v1/prompts/${uuid}`, { token: user.token })
    expect(gone.status).toBe(404)
  }, 120_000)

  it('searches the list, says so when a prompt is not found, and fits 360 px', async () => {
    const user = await t.user()
    for (const name of ['Release notes', 'Meeting summary', `A prompt whose name is far too long for any table cell ${'x'.repeat(120)}`]) {
      const created = await t.server.http('POST', '/api/v1/prompts', {
        token: user.token,
        body: { name, content: 'Summarise {{text}}', description: 'd'.repeat(300) },
      })
      expect(created.status).toBe(201)
    }
    const page = await t.newPage()
    await t.open(page, user, '/prompts')
    await page.getByRole('link', { name: 'Release notes' }).waitFor()
    await expect.poll(() => page.getByRole('row').count()).toBe(4)
    await page.getByRole('textbox', { name: 'Search' }).fill('meeting')
    await expect.poll(() => page.getByRole('row').count()).toBe(2)
    await page.getByRole('link', { name: 'Meeting summary' }).waitFor()
    await page.getByRole('textbox', { name: 'Search' }).fill('')
    await page.getByRole('link', { name: 'Release notes' }).waitFor()
    await t.screenshot(page, 'prompts-list')

    // A template's names the inputs do not declare are proposed; a declared input it no longer uses is flagged.
    const weather = await t.server.http('POST', '/api/v1/prompts', {
      token: user.token,
      body: {
        name: 'Weather report',
        content: '{{=<% %>=}}Weather in <%city%><%#days%> for <%days.count%> days<%/days%>; <%! a comment %><%.%>',
        metadata: { input: [{ key: 'country', label: 'Country', type: 'text' }] },
      },
    })
    expect(weather.status).toBe(201)
    await page.goto(`${t.server.url}/console/prompts/${weather.body.data.uuid}`)
    const proposed = page.getByRole('region', { name: 'Proposed inputs' })
    await proposed.getByRole('button', { name: 'Declare input city' }).waitFor()
    // The same names the service's parser finds: the dotted name by its first part, no comment, no `.`.
    expect(await proposed.getByRole('button', { name: /^Declare input / }).allTextContents()).toEqual(['+ city', '+ days'])
    const country = page.getByRole('group', { name: 'Input 1' })
    await country.getByText('The template does not use {{country}}').waitFor()
    await t.screenshot(page, 'prompt-proposed-inputs')
    await proposed.getByRole('button', { name: 'Declare input city' }).click()
    await page.getByRole('group', { name: 'Input 2' }).getByRole('textbox', { name: 'Label' }).fill('The city')
    await page.getByRole('button', { name: 'Remove input 1' }).click()
    await page.getByRole('button', { name: 'Save prompt' }).click()
    await page.getByText('Prompt saved').waitFor()
    const declared = await t.server.http('GET', `/api/v1/prompts/${weather.body.data.uuid}`, { token: user.token })
    expect(declared.body.data.metadata.input).toEqual([{ key: 'city', label: 'The city', type: 'text', required: false }])
    await proposed.getByRole('button', { name: 'Declare input days' }).waitFor()
    expect(await proposed.getByRole('button', { name: 'Declare input city' }).count()).toBe(0)

    await page.goto(`${t.server.url}/console/prompts/00000000-0000-4000-8000-000000000000`)
    await page.getByRole('alert').getByText('Not found').waitFor()

    const narrow = await t.newPage({ width: 360, height: 740 })
    await t.open(narrow, user, '/prompts')
    await narrow.getByRole('link', { name: 'Release notes' }).waitFor()
    expect(
      await narrow.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth'),
    ).toBeLessThanOrEqual(0)
    await narrow.getByRole('link', { name: /far too long/ }).click()
    await narrow.getByRole('button', { name: 'Add input' }).click()
    await narrow.getByRole('group', { name: 'Input 1' }).waitFor()
    expect(
      await narrow.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth'),
    ).toBeLessThanOrEqual(0)
    await t.screenshot(narrow, 'prompt-edit-360')
  }, 90_000)
})
