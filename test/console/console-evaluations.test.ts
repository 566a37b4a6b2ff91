/**
 * The console's datasets and evaluations in a real browser (docs/api/evaluations.md): a dataset
 * created on the screen and its items added, edited and deleted there (checked over REST), the
 * dataset renamed and another deleted after a confirmation; an evaluation created on the screen,
 * an invalid regular expression refused at its pattern field first with nothing stored, then
 * followed on its screen until it succeeds against the local model server (its summary and a
 * result's scores read); two evaluations compared from the first's screen; a slow one canceled
 * after a confirmation; the lists at 360 px. A json_schema scorer whose schema is not JSON refused
 * at its field before sending and one Ajv cannot compile at the service's issue, then created with
 * an llm_judge and a max_cost scorer; a JSONL upload with a bad line refused at the drop area with
 * its line, then a good one adding its items.
 */
import type { Page } from 'playwright-core'
import { beforeAll, expect, it } from 'vitest'
import { describeConsole, type ConsoleSuite, type ConsoleUser } from '../helpers/console.ts'

const DATASETS = '/api/v1/datasets'
const EVALUATIONS = '/api/v1/evaluations'

async function choose(page: Page, label: string, option: string | RegExp) {
  await page.getByRole('combobox', { name: label }).click()
  await page.getByRole('option', { name: option }).click()
}

/** The messages that describe a field (Mantine links its error by aria-describedby). */
async function describedText(page: Page, field: ReturnType<Page['getByRole']>): Promise<string> {
  const ids = ((await field.getAttribute('aria-describedby')) ?? '').split(/\s+/).filter(Boolean)
  const texts = await Promise.all(ids.map((id) => page.locator(`[id="${id}"]`).textContent()))
  return texts.join(' ')
}

/** A table's rows as their cells' texts, white space squeezed. */
const rowsOf = (table: ReturnType<Page['getByRole']>) =>
  table
    .getByRole('row')
    .evaluateAll((rows) =>
      rows.map((row) =>
        Array.from(row.querySelectorAll('th, td'), (cell: { textContent: string | null }) =>
          (cell.textContent ?? '').replace(/\s+/g, ' ').trim(),
        ),
      ),
    )

const noSideScroll = (page: Page) => page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth')

describeConsole('web console: datasets and evaluations', (t: ConsoleSuite) => {
  let user: ConsoleUser
  let agent: string
  let dataset: string
  let first: string

  const get = async (path: string) => {
    const res = await t.server.http('GET', path, { token: user.token })
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    return res.body
  }
  const ended = async (uuid: string) => {
    await expect.poll(async () => (await get(`${EVALUATIONS}/${uuid}`)).data.status, { timeout: 20_000 }).not.toMatch(/queued|running/)
    return (await get(`${EVALUATIONS}/${uuid}`)).data
  }

  beforeAll(async () => {
    user = await t.user('Evaluation Owner')
    const res = await t.server.http('POST', '/api/v1/agents', {
      token: user.token,
      body: { name: 'Echo agent', instruction: 'Answer briefly.' },
    })
    expect(res.status).toBe(201)
    agent = res.body.data.uuid
  })

  it('creates a dataset, adds, edits and deletes items, renames it and deletes another after confirming', async () => {
    const page = await t.newPage()
    await t.open(page, user, '/datasets')
    await page.getByText('No datasets yet').waitFor()
    await page.getByRole('button', { name: 'New dataset' }).click()
    const dialog = page.getByRole('dialog', { name: 'New dataset' })
    await dialog.getByRole('textbox', { name: 'Name' }).fill('Arithmetic')
    await dialog.getByRole('textbox', { name: 'Description' }).fill('Sums and colours')
    await dialog.getByRole('button', { name: 'Create dataset' }).click()
    await page.getByRole('heading', { name: 'Arithmetic' }).waitFor()
    const listed = (await get(DATASETS)).data
    expect(listed).toHaveLength(1)
    expect(listed[0]).toMatchObject({ name: 'Arithmetic', description: 'Sums and colours', visibility: 'private', items_count: 0 })
    dataset = listed[0].uuid
    expect(page.url()).toContain(`/console/datasets/${dataset}`)

    const form = page.getByRole('form', { name: 'Add an item' })
    const add = async (input: string, expected: string) => {
      await form.getByRole('textbox', { name: 'Input' }).fill(input)
      await form.getByRole('textbox', { name: 'Expected output' }).fill(expected)
      await form.getByRole('button', { name: 'Add item' }).click()
      await page.getByRole('table', { name: 'Items' }).getByText(input, { exact: true }).waitFor()
    }
    await add('What is 2 + 2?', 'Echo: What is 2 + 2?')
    await add('Name a colour.', 'blue')
    await add('Delete me', 'gone')
    const items = async () =>
      (await get(`${DATASETS}/${dataset}/items`)).data.map((i: { input: string; expected_output: string | null }) => [
        i.input,
        i.expected_output,
      ])
    expect(await items()).toEqual([
      ['What is 2 + 2?', 'Echo: What is 2 + 2?'],
      ['Name a colour.', 'blue'],
      ['Delete me', 'gone'],
    ])

    await page.getByRole('button', { name: 'Delete item 3' }).click()
    await page.getByRole('dialog', { name: 'Delete this item?' }).getByRole('button', { name: 'Delete item' }).click()
    await expect.poll(() => page.getByRole('table', { name: 'Items' }).getByText('Delete me', { exact: true }).count()).toBe(0)
    await page.getByRole('button', { name: 'Edit item 2' }).click()
    const edit = page.getByRole('dialog', { name: 'Edit the item' })
    await edit.getByRole('textbox', { name: 'Expected output' }).fill('red')
    await edit.getByRole('button', { name: 'Save item' }).click()
    await page.getByRole('table', { name: 'Items' }).getByText('red', { exact: true }).waitFor()
    expect(await items()).toEqual([
      ['What is 2 + 2?', 'Echo: What is 2 + 2?'],
      ['Name a colour.', 'red'],
    ])
    await page.getByText('2 items').waitFor()

    await page.getByRole('button', { name: 'Edit', exact: true }).click()
    const rename = page.getByRole('dialog', { name: 'Edit the dataset' })
    await rename.getByRole('textbox', { name: 'Name' }).fill('Arithmetic set')
    await rename.getByRole('button', { name: 'Save changes' }).click()
    await page.getByRole('heading', { name: 'Arithmetic set' }).waitFor()
    expect((await get(`${DATASETS}/${dataset}`)).data).toMatchObject({ name: 'Arithmetic set', items_count: 2 })

    const other = await t.server.http('POST', DATASETS, { token: user.token, body: { name: 'Throwaway' } })
    expect(other.status).toBe(201)
    await t.open(page, user, `/datasets/${other.body.data.uuid}`)
    await page.getByRole('heading', { name: 'Throwaway' }).waitFor()
    await page.getByRole('button', { name: 'Delete', exact: true }).click()
    await page.getByRole('dialog', { name: 'Delete this dataset?' }).getByRole('button', { name: 'Delete dataset' }).click()
    await page.getByRole('heading', { name: 'Datasets' }).waitFor()
    expect((await t.server.http('GET', `${DATASETS}/${other.body.data.uuid}`, { token: user.token })).status).toBe(404)
    await page.getByRole('table', { name: 'Datasets' }).getByRole('link', { name: 'Arithmetic set' }).waitFor()
    await t.screenshot(page, 'datasets')
  }, 60_000)

  it('creates an evaluation, refusing an invalid regex at its field first, and reads its summary and scores', async () => {
    const page = await t.newPage()
    await t.open(page, user, '/evaluations')
    await page.getByText('No evaluations yet').waitFor()
    await page.getByRole('button', { name: 'New evaluation' }).click()
    const dialog = page.getByRole('dialog', { name: 'New evaluation' })
    await dialog.getByRole('textbox', { name: 'Name' }).fill('First run')
    await choose(page, 'Dataset', /^Arithmetic set/)
    await choose(page, 'Agent', 'Echo agent')
    await dialog.getByRole('button', { name: 'Add a scorer' }).click()
    await choose(page, 'Scorer 2', 'Regular expression')
    const pattern = dialog.getByRole('textbox', { name: 'Scorer 2 pattern' })
    await pattern.fill('^Echo (')
    await dialog.getByRole('button', { name: 'Start evaluation' }).click()

    // The service's issue at `scorers.1.pattern` is shown at that row's pattern; nothing is stored.
    await expect.poll(() => pattern.getAttribute('aria-invalid')).toBe('true')
    expect(await describedText(page, pattern)).toContain('is not a valid regular expression')
    expect((await get(EVALUATIONS)).data).toEqual([])

    await pattern.fill('^Echo')
    await dialog.getByRole('button', { name: 'Start evaluation' }).click()
    await page.getByRole('heading', { name: 'First run' }).waitFor()
    const stored = (await get(EVALUATIONS)).data
    expect(stored).toHaveLength(1)
    first = stored[0].uuid
    expect(stored[0]).toMatchObject({
      name: 'First run',
      agent: { uuid: agent },
      dataset: { uuid: dataset },
      concurrency: 4,
      scorers: [{ type: 'exact_match' }, { type: 'regex', pattern: '^Echo' }],
    })

    // Read again every 2 s until it ends.
    await page.getByText('succeeded', { exact: true }).first().waitFor({ timeout: 30_000 })
    await page.getByText('2 of 2 items done').waitFor()
    const summary = page.getByRole('table', { name: 'Summary' })
    await expect
      .poll(() => rowsOf(summary))
      .toEqual([
        ['Scorer', 'Mean score', 'Pass rate'],
        ['exact_match', '0.5000', '50.0%'],
        ['regex /^Echo/', '1.0000', '100.0%'],
      ])
    const results = page.getByRole('table', { name: 'Results' })
    const sum = results.getByRole('row').filter({ hasText: 'What is 2 + 2?' })
    // The results are read again once the evaluation has ended: poll until that answer is shown.
    await expect
      .poll(async () => (await sum.textContent()) ?? '', { timeout: 10_000 })
      .toContain('pass: The output equals the expected output')
    const colour = results.getByRole('row').filter({ hasText: 'Name a colour.' })
    await colour.getByText('Echo: Name a colour.').waitFor()
    await expect.poll(async () => (await colour.textContent()) ?? '', { timeout: 10_000 }).toContain('fail: The output differs')
    expect(await colour.textContent()).toContain('fail: The output differs from the expected output')
    expect(await colour.textContent()).toContain('pass: The output matches /^Echo/')
    await colour.getByText(/^fail/).first().hover()
    await page
      .getByRole('tooltip')
      .getByText(/differs from the expected output/)
      .waitFor()
    await t.screenshot(page, 'evaluation')
  }, 60_000)

  it('compares two evaluations of the dataset from the first one', async () => {
    // The item's expected output now matches: a second evaluation passes it where the first failed.
    const item = (await get(`${DATASETS}/${dataset}/items`)).data[1]
    expect(
      (
        await t.server.http('PUT', `/api/v1/dataset-items/${item.uuid}`, {
          token: user.token,
          body: { expected_output: 'Echo: Name a colour.' },
        })
      ).status,
    ).toBe(200)
    const second = await t.server.http('POST', EVALUATIONS, {
      token: user.token,
      body: {
        name: 'Second run',
        dataset_uuid: dataset,
        agent_uuid: agent,
        scorers: [{ type: 'exact_match' }, { type: 'regex', pattern: '^Echo' }],
      },
    })
    expect(second.status).toBe(202)
    expect((await ended(second.body.data.uuid)).status).toBe('succeeded')

    const page = await t.newPage()
    await t.open(page, user, `/evaluations/${first}`)
    await page.getByRole('heading', { name: 'First run' }).waitFor()
    await page.getByRole('button', { name: 'Compare with…' }).click()
    const dialog = page.getByRole('dialog', { name: 'Compare with another evaluation' })
    await choose(page, 'Candidate evaluation', /^Second run/)
    await dialog.getByRole('button', { name: 'Compare', exact: true }).click()
    const compared = page.getByRole('table', { name: 'Scorers compared' })
    await compared.waitFor()
    const url = new URL(page.url())
    expect(url.pathname).toBe('/console/evaluations/compare')
    expect(url.searchParams.get('base')).toBe(first)
    expect(url.searchParams.get('candidate')).toBe(second.body.data.uuid)
    expect(await rowsOf(compared)).toEqual([
      ['Scorer', 'Base mean', 'Candidate mean', 'Difference'],
      ['exact_match', '0.5000', '1.0000', '+0.5000'],
      ['regex /^Echo/', '1.0000', '1.0000', '0.0000'],
    ])
    expect(await rowsOf(page.getByRole('table', { name: 'Changed items' }))).toEqual([
      ['Input', 'Scorer', 'Base → candidate'],
      ['Name a colour.', 'exact_match', 'fail → pass'],
    ])
    await t.screenshot(page, 'evaluation-compare')
  }, 60_000)

  it('cancels a slow evaluation after confirming, and fits 360 px', async () => {
    t.upstream.respondWith(() => ({ kind: 'slow', delayMs: 30_000 }))
    try {
      const created = await t.server.http('POST', EVALUATIONS, {
        token: user.token,
        body: { name: 'Slow run', dataset_uuid: dataset, agent_uuid: agent, scorers: [{ type: 'exact_match' }], concurrency: 1 },
      })
      expect(created.status).toBe(202)
      const uuid = created.body.data.uuid as string
      const page = await t.newPage()
      await t.open(page, user, `/evaluations/${uuid}`)
      await page.getByRole('heading', { name: 'Slow run' }).waitFor()
      await page.getByRole('button', { name: 'Cancel evaluation' }).click()
      await page.getByRole('dialog', { name: 'Cancel this evaluation?' }).getByRole('button', { name: 'Cancel it' }).click()
      await page.getByText('canceled', { exact: true }).first().waitFor()
      await expect.poll(() => page.getByRole('button', { name: 'Cancel evaluation' }).count()).toBe(0)
      expect((await get(`${EVALUATIONS}/${uuid}`)).data.status).toBe('canceled')
    } finally {
      t.upstream.respondWith(null)
    }

    const narrow = await t.newPage({ width: 360, height: 740 })
    await t.open(narrow, user, '/evaluations')
    await narrow.getByRole('table', { name: 'Evaluations' }).getByRole('link', { name: 'Slow run' }).waitFor()
    expect(await noSideScroll(narrow)).toBeLessThanOrEqual(0)
    await t.screenshot(narrow, 'evaluations-360')
    await narrow.getByRole('button', { name: 'New evaluation' }).click()
    await narrow.getByRole('dialog', { name: 'New evaluation' }).waitFor()
    expect(await noSideScroll(narrow)).toBeLessThanOrEqual(0)
    await t.open(narrow, user, '/datasets')
    await narrow.getByRole('table', { name: 'Datasets' }).waitFor()
    expect(await noSideScroll(narrow)).toBeLessThanOrEqual(0)
    await t.screenshot(narrow, 'datasets-360')
    await t.open(narrow, user, `/datasets/${dataset}`)
    await narrow.getByRole('table', { name: 'Items' }).waitFor()
    expect(await noSideScroll(narrow)).toBeLessThanOrEqual(0)
  }, 60_000)

  it('refuses a json_schema scorer that is not JSON at its field, then creates one with llm_judge and max_cost', async () => {
    const before = (await get(EVALUATIONS)).data.length
    const page = await t.newPage()
    await t.open(page, user, '/evaluations')
    await page.getByRole('button', { name: 'New evaluation' }).click()
    const dialog = page.getByRole('dialog', { name: 'New evaluation' })
    await dialog.getByRole('textbox', { name: 'Name' }).fill('Shaped answers')
    await choose(page, 'Dataset', /^Arithmetic set/)
    await choose(page, 'Agent', 'Echo agent')
    await choose(page, 'Scorer 1', 'JSON Schema')
    const schema = dialog.getByRole('textbox', { name: 'Scorer 1 schema' })
    await schema.fill('{"type": "object",')
    await dialog.getByRole('button', { name: 'Start evaluation' }).click()
    await expect.poll(() => schema.getAttribute('aria-invalid')).toBe('true')
    expect(await describedText(page, schema)).toContain('is not valid JSON')
    expect((await get(EVALUATIONS)).data).toHaveLength(before)

    // JSON, but not a schema Ajv compiles: the service's issue at `scorers.0.schema`.
    await schema.fill('{"type": "no-such-type"}')
    await dialog.getByRole('button', { name: 'Start evaluation' }).click()
    await expect.poll(() => describedText(page, schema)).toMatch(/type/)
    expect(await schema.getAttribute('aria-invalid')).toBe('true')
    expect((await get(EVALUATIONS)).data).toHaveLength(before)

    await schema.fill('{"type": "object", "required": ["answer"]}')
    await dialog.getByRole('button', { name: 'Add a scorer' }).click()
    await choose(page, 'Scorer 2', 'Model as judge')
    await dialog.getByRole('textbox', { name: 'Scorer 2 rubric' }).fill('Answers the question in one sentence.')
    await choose(page, 'Scorer 2 model', 'GPT-4o (OpenAI)')
    await dialog.getByRole('button', { name: 'Add a scorer' }).click()
    await choose(page, 'Scorer 3', 'Maximum cost')
    await dialog.getByRole('textbox', { name: 'Scorer 3 dollars' }).fill('0.0025')
    await dialog.getByRole('button', { name: 'Start evaluation' }).click()
    await page.getByRole('heading', { name: 'Shaped answers' }).waitFor()
    const stored = (await get(EVALUATIONS)).data
    expect(stored).toHaveLength(before + 1)
    const created = stored.find((e: { name: string }) => e.name === 'Shaped answers')
    expect(created.scorers).toEqual([
      { type: 'json_schema', schema: { type: 'object', required: ['answer'] } },
      { type: 'llm_judge', rubric: 'Answers the question in one sentence.', large_language_model: 'gpt-4o' },
      { type: 'max_cost', value: 0.0025 },
    ])
    await ended(created.uuid)
  }, 60_000)

  it('uploads items from a JSONL file, refusing a bad line with its number first', async () => {
    const created = await t.server.http('POST', DATASETS, { token: user.token, body: { name: 'Uploaded cases' } })
    expect(created.status).toBe(201)
    const uuid = created.body.data.uuid as string
    const page = await t.newPage()
    await t.open(page, user, `/datasets/${uuid}`)
    await page.getByRole('heading', { name: 'Uploaded cases' }).waitFor()
    const section = page.getByRole('region', { name: 'Upload items' })
    const input = section.locator('input[type="file"]')
    const jsonl = (name: string, lines: string[]) => ({ name, mimeType: 'application/jsonl', buffer: Buffer.from(lines.join('\n') + '\n') })

    await input.setInputFiles(jsonl('bad.jsonl', ['{"input": "What is 3 + 3?", "expected_output": "6"}', '{"input": "Broken",']))
    await section
      .getByRole('alert')
      .getByText(/Line 2/)
      .waitFor()
    expect(await section.getByRole('alert').textContent()).toContain('bad.jsonl')
    expect((await get(`${DATASETS}/${uuid}`)).data.items_count).toBe(0)
    expect((await get(`${DATASETS}/${uuid}/items`)).data).toEqual([])

    await input.setInputFiles(
      jsonl('good.jsonl', [
        '{"input": "What is 3 + 3?", "expected_output": "6"}',
        '',
        '{"input": "Name a fruit.", "metadata": {"open": true}}',
      ]),
    )
    await page.getByText('2 items added').waitFor()
    expect(await section.getByRole('alert').count()).toBe(0)
    expect((await get(`${DATASETS}/${uuid}`)).data.items_count).toBe(2)
    const items = page.getByRole('table', { name: 'Items' })
    await items.getByText('Name a fruit.', { exact: true }).waitFor()
    expect((await rowsOf(items)).slice(1).map((row) => row.slice(0, 2))).toEqual([
      ['What is 3 + 3?', '6'],
      ['Name a fruit.', 'none'],
    ])
    await page.getByText('2 items', { exact: true }).waitFor()
    await t.screenshot(page, 'dataset-upload')
  }, 60_000)
})
