/**
 * Chat in a real browser (docs/console.md, "Streaming and resuming"): an agent on an OpenAI model
 * served by the local model server (test/helpers/upstream.ts) is picked, a message sent with
 * Enter starts a thread and the answer streams in; a tool call of an HTTP tool (a local server the
 * test starts; TOOL_ALLOW_PRIVATE_NETWORK lets the run reach it) shows as a collapsible item while
 * the answer is still being written; the service restarting during an answer (SIGTERM: its
 * streams are cut and the run gets SHUTDOWN_TIMEOUT_MS to finish, docs/operations.md "Shutdown")
 * and a page reload during one both end with the whole answer, nobody touching anything; Stop
 * cancels; a 10,000-character word fits a 360 px screen. What the screens show is checked against
 * what the service stored, over REST.
 */
import { createServer, type Server } from 'node:http'
import type { Page } from 'playwright-core'
import { afterAll, beforeAll, beforeEach, expect, it } from 'vitest'
import { describeConsole, type ConsoleSuite, type ConsoleUser } from '../helpers/console.ts'

/** The model every agent of these tests names: the upstream serves it. */
const MODEL = 'gpt-4o-mini'
/** The grace a draining service gives its runs: far longer than the slow answer of the restart test. */
const SHUTDOWN_TIMEOUT_MS = 15_000

interface Stored {
  role: string
  content: string
  run_uuid: string | null
  parts: { type: string; tool_name?: string }[]
}

describeConsole(
  'web console: chat',
  (t) => {
    let toolServer: Server
    let toolUrl = ''
    const toolRequests: string[] = []

    beforeAll(async () => {
      toolServer = createServer((req, res) => {
        toolRequests.push(req.url ?? '')
        res.setHeader('content-type', 'application/json')
        res.end(JSON.stringify({ city: new URL(req.url ?? '/', 'http://x').searchParams.get('city'), forecast: 'sunny and 21 degrees' }))
      })
      await new Promise<void>((resolve) => toolServer.listen(0, '127.0.0.1', resolve))
      const address = toolServer.address()
      toolUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
    })
    afterAll(async () => {
      await new Promise((resolve) => toolServer?.close(resolve))
    })
    beforeEach(() => {
      t.upstream.reset()
      toolRequests.length = 0
    })

    it('picks an agent, sends with Enter, streams the answer into a new thread, and stores both', async () => {
      const user = await t.user()
      const agent = await createAgent(t, user, { name: 'Trip planner' })
      t.upstream.enqueue({ kind: 'slow', delayMs: 3_000, then: { kind: 'text', text: 'Pack light: the forecast is mild all week.' } })
      const page = await t.newPage()
      await t.open(page, user, '/chat')
      await page.getByRole('heading', { name: 'Chat' }).waitFor()
      await page.getByRole('combobox', { name: 'Agent' }).fill('Trip')
      await page.getByRole('option', { name: 'Trip planner' }).click()
      await page.waitForURL(new RegExp(`/console/chat/${agent}$`))
      await page.getByText('A new thread').waitFor()

      const message = page.getByRole('textbox', { name: 'Message' })
      await message.fill('What should I pack for Oslo?')
      await message.press('Enter')
      await page.waitForURL(new RegExp(`/console/chat/${agent}/[0-9a-f-]{36}$`))
      const threadUuid = page.url().split('/').at(-1)!
      // While the model is slow the answer is being written: Stop is offered instead of Send.
      await page.getByRole('article', { name: 'Answer of Trip planner (being written)' }).waitFor()
      await page.getByRole('button', { name: 'Stop' }).waitFor()
      await page.getByText('Pack light: the forecast is mild all week.').waitFor()
      // The stored answer replaces the streamed one: it carries the model and tokens of its message.
      await page.getByText(/gpt-4o-mini · \d+ in, \d+ out/).waitFor()
      await page.getByRole('button', { name: 'Send' }).waitFor()
      // The thread is named after the message, and listed.
      await page
        .getByRole('navigation', { name: 'Threads' })
        .getByRole('link', { name: /What should I pack for Oslo\?/ })
        .waitFor()

      // Shift+Enter is a new line; the Send button sends in the same thread.
      t.upstream.enqueue({ kind: 'text', text: 'A raincoat, then.' })
      await message.fill('And if it rains?')
      await message.press('Shift+Enter')
      await message.pressSequentially('Twice?')
      expect(await message.inputValue()).toBe('And if it rains?\nTwice?')
      await page.getByRole('button', { name: 'Send' }).click()
      await page.getByText('A raincoat, then.').waitFor()
      await expect.poll(() => page.getByRole('article', { name: 'Answer of Trip planner' }).count()).toBe(2)
      await t.screenshot(page, 'chat-thread')

      const threads = await t.server.http('GET', `/api/v1/threads?agent_uuid=${agent}`, { token: user.token })
      expect(threads.body.data.map((thread: { uuid: string; name: string }) => [thread.uuid, thread.name])).toEqual([
        [threadUuid, 'What should I pack for Oslo?'],
      ])
      const stored = await messagesOf(t, user, threadUuid)
      expect(stored.map((m) => [m.role, m.content])).toEqual([
        ['user', 'What should I pack for Oslo?'],
        ['assistant', 'Pack light: the forecast is mild all week.'],
        ['user', 'And if it rains?\nTwice?'],
        ['assistant', 'A raincoat, then.'],
      ])
      // Both answers came from the upstream, for the agent's model.
      expect(t.upstream.requests.map((request) => request.body?.model)).toEqual([MODEL, MODEL])

      // A thread or an agent that is not there says so.
      await page.goto(`${t.server.url}/console/chat/${agent}/${crypto.randomUUID()}`)
      await page.getByRole('alert').getByText('Not found').waitFor()
      await page.goto(`${t.server.url}/console/chat/${crypto.randomUUID()}`)
      await page.getByRole('alert').getByText('Not found').waitFor()
      await page.getByRole('link', { name: 'Choose another agent' }).waitFor()
    })

    it('shows a tool call, its arguments and result, while the rest of the answer is still being written', async () => {
      const user = await t.user()
      const tool = await t.server.http('POST', '/api/v1/tools', {
        token: user.token,
        body: {
          name: 'Weather',
          description: 'The forecast of a city',
          method: 'GET',
          url: `${toolUrl}/weather?city={{city}}`,
          input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        },
      })
      expect(tool.status, JSON.stringify(tool.body)).toBe(201)
      const agent = await createAgent(t, user, { name: 'Forecaster', tools: [{ tool_uuid: tool.body.data.uuid }] })
      t.upstream.enqueue(
        { kind: 'tool_calls', calls: [{ name: 'weather', arguments: '{"city":"Bergen"}', id: 'call_bergen' }] },
        { kind: 'slow', delayMs: 5_000, then: { kind: 'text', text: 'Bergen: sunny and 21 degrees.' } },
      )
      const page = await t.newPage()
      await t.open(page, user, `/chat/${agent}`)
      await page.getByRole('textbox', { name: 'Message' }).fill('Weather in Bergen?')
      await page.getByRole('button', { name: 'Send' }).click()

      // Part of the answer: the call is done, its text is not written yet.
      const writing = page.getByRole('article', { name: 'Answer of Forecaster (being written)' })
      const call = writing.getByRole('button', { name: 'Tool call weather (done)' })
      await call.waitFor()
      expect(await writing.getByText('Bergen: sunny').count()).toBe(0)
      await call.click()
      await writing.getByText('{ "city": "Bergen" }', { exact: true }).waitFor()
      await writing.getByText('{ "city": "Bergen", "forecast": "sunny and 21 degrees" }', { exact: true }).waitFor()

      // The whole answer, then the stored one in its place, the call kept in it.
      await page.getByText('Bergen: sunny and 21 degrees.').waitFor()
      const answer = page.getByRole('article', { name: 'Answer of Forecaster' })
      await answer.getByText(/gpt-4o-mini · \d+ in/).waitFor()
      await answer.getByRole('button', { name: 'Tool call weather (done)' }).click()
      await answer.getByText('{ "city": "Bergen", "forecast": "sunny and 21 degrees" }', { exact: true }).waitFor()
      await t.screenshot(page, 'chat-tool-call')

      expect(toolRequests).toEqual(['/weather?city=Bergen'])
      const threadUuid = page.url().split('/').at(-1)!
      const stored = await messagesOf(t, user, threadUuid)
      expect(stored.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant'])
      expect(stored[1].parts).toEqual([{ type: 'tool-call', tool_call_id: 'call_bergen', tool_name: 'weather', input: { city: 'Bergen' } }])
      expect(stored[3].content).toBe('Bergen: sunny and 21 degrees.')
    })

    it('finishes an answer across a restart of the service, and picks a running answer up after a reload', async () => {
      const user = await t.user()
      const agent = await createAgent(t, user, { name: 'Patient one' })
      const page = await t.newPage()
      await t.open(page, user, `/chat/${agent}`)

      // The service restarts while the model is still answering: SIGTERM cuts the streams, the run
      // finishes within the grace period, and the page goes on from the last event it saw.
      t.upstream.enqueue({ kind: 'slow', delayMs: 6_000, then: { kind: 'text', text: 'Still here after the restart.' } })
      await page.getByRole('textbox', { name: 'Message' }).fill('Tell me something slowly')
      await page.getByRole('textbox', { name: 'Message' }).press('Enter')
      await page.getByRole('article', { name: 'Answer of Patient one (being written)' }).waitFor()
      await page.getByText('Thinking…').waitFor()
      await expect.poll(() => t.upstream.pending()).toBe(1)
      const subscriptions: unknown[] = []
      page.on('request', (request) => {
        const url = new URL(request.url())
        if (url.pathname === '/trpc/runs.events') subscriptions.push(JSON.parse(url.searchParams.get('input') ?? 'null'))
      })
      const restarting = t.restart()
      await page.getByText('Connection lost: resuming the answer…').waitFor({ timeout: 15_000 })
      await restarting
      await page.getByText('Still here after the restart.').waitFor({ timeout: 30_000 })
      await page.getByText(/gpt-4o-mini · \d+ in/).waitFor({ timeout: 15_000 })
      await t.screenshot(page, 'chat-resumed')
      // The page subscribed again on its own, from the last event it had seen (run.started).
      expect(subscriptions).toContainEqual(expect.objectContaining({ lastEventId: '1' }))
      const threadUuid = page.url().split('/').at(-1)!
      const stored = await messagesOf(t, user, threadUuid)
      expect(stored.map((m) => [m.role, m.content])).toEqual([
        ['user', 'Tell me something slowly'],
        ['assistant', 'Still here after the restart.'],
      ])
      const run = await t.server.http('GET', `/api/v1/runs/${stored[1].run_uuid}`, { token: user.token })
      expect(run.body.data.run).toMatchObject({ status: 'succeeded', output: 'Still here after the restart.' })

      // Reloaded while an answer is being written: the screen finds the run and follows it to the end.
      t.upstream.enqueue({ kind: 'slow', delayMs: 6_000, then: { kind: 'text', text: 'Found you again.' } })
      await page.getByRole('textbox', { name: 'Message' }).fill('Again, slowly')
      await page.getByRole('button', { name: 'Send' }).click()
      await page.getByRole('button', { name: 'Stop' }).waitFor()
      await page.reload()
      await page.getByRole('article', { name: 'Answer of Patient one (being written)' }).waitFor()
      await page.getByRole('button', { name: 'Stop' }).waitFor()
      await page.getByText('Found you again.').waitFor()
      await page.getByRole('button', { name: 'Send' }).waitFor()
      expect((await messagesOf(t, user, threadUuid)).map((m) => m.content).at(-1)).toBe('Found you again.')
    }, 120_000)

    it('stops an answer with Stop, and shows a failed answer as an alert; neither stores an answer', async () => {
      const user = await t.user()
      const agent = await createAgent(t, user, { name: 'Rambler' })
      t.upstream.enqueue({ kind: 'slow', delayMs: 60_000 })
      const page = await t.newPage()
      await t.open(page, user, `/chat/${agent}`)
      await page.getByRole('textbox', { name: 'Message' }).fill('Talk for a long time')
      await page.getByRole('textbox', { name: 'Message' }).press('Enter')
      await page.getByRole('button', { name: 'Stop' }).click()
      await page.getByText('The answer was stopped').waitFor()
      await page.getByRole('button', { name: 'Send' }).waitFor()
      const threadUuid = page.url().split('/').at(-1)!
      const stored = await messagesOf(t, user, threadUuid)
      expect(stored.map((m) => m.role)).toEqual(['user'])
      const run = await t.server.http('GET', `/api/v1/runs/${stored[0].run_uuid}`, { token: user.token })
      expect(run.body.data.run).toMatchObject({ status: 'canceled', error: { code: 'canceled' } })
      // The model call was given up too.
      await expect.poll(() => t.upstream.pending()).toBe(0)

      t.upstream.enqueue({ kind: 'status', status: 500 })
      await page.getByRole('textbox', { name: 'Message' }).fill('Try once more')
      await page.getByRole('button', { name: 'Send' }).click()
      const failed = page.getByRole('alert').filter({ hasText: 'The answer failed' })
      await failed.waitFor()
      expect(await failed.textContent()).toMatch(/upstream_error/)
      await page.getByRole('button', { name: 'Send' }).waitFor()
      const after = await messagesOf(t, user, threadUuid)
      expect(after.map((m) => [m.role, m.content])).toEqual([
        ['user', 'Talk for a long time'],
        ['user', 'Try once more'],
      ])
      const failedRun = await t.server.http('GET', `/api/v1/runs/${after[1].run_uuid}`, { token: user.token })
      expect(failedRun.body.data.run).toMatchObject({ status: 'failed', error: { code: 'upstream_error' } })
    })

    it('fits a 10,000-character word and a very long agent name on a 360 px screen', async () => {
      const user = await t.user()
      const longName = `An agent with a name that goes on ${'and-on-'.repeat(30)}without end`
      const agent = await createAgent(t, user, { name: longName })
      const word = 'w'.repeat(10_000)
      const page = await t.newPage({ width: 360, height: 740 })
      await t.open(page, user, `/chat/${agent}`)
      await page.getByRole('heading', { name: longName }).waitFor()
      await page.getByRole('textbox', { name: 'Message' }).fill(word)
      await page.getByRole('textbox', { name: 'Message' }).press('Enter')
      await page.waitForURL(/\/chat\/[^/]+\/[0-9a-f-]{36}$/)
      // The upstream echoes the message: the answer is as long.
      await page.getByText(`Echo: ${word}`).waitFor()
      await page.getByText(/gpt-4o-mini · \d+ in/).waitFor()
      await page.getByRole('combobox', { name: 'Thread' }).waitFor()
      expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0)
      // The whole page in one picture, without the fixed header and the sticky composer drawn over it.
      await page.setViewportSize({ width: 360, height: await page.evaluate<number>('document.documentElement.scrollHeight') })
      await t.screenshot(page, 'chat-narrow-360')
      await page.setViewportSize({ width: 360, height: 740 })
      // Folded to a few lines; unfolded, it still wraps within the screen.
      const answer = page.getByRole('article', { name: `Answer of ${longName}` })
      await answer.getByRole('button', { name: 'Show the whole message' }).click()
      await answer.getByRole('button', { name: 'Show less' }).waitFor()
      expect(await horizontalOverflow(page)).toBeLessThanOrEqual(0)
      const threadUuid = page.url().split('/').at(-1)!
      const stored = await messagesOf(t, user, threadUuid)
      expect(stored.map((m) => m.content.length)).toEqual([10_000, 10_006])
    })

    it('sends once on a double click, pins a version, takes an approval inline, and says busy, budget and credential refusals in the API words', async () => {
      const user = await t.user()
      const tool = await t.server.http('POST', '/api/v1/tools', {
        token: user.token,
        body: {
          name: 'Weather',
          description: 'The forecast of a city',
          method: 'GET',
          url: `${toolUrl}/weather?city={{city}}`,
          input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
          requires_approval: true,
        },
      })
      expect(tool.status, JSON.stringify(tool.body)).toBe(201)
      const agent = await createAgent(t, user, { name: 'Careful forecaster', tools: [{ tool_uuid: tool.body.data.uuid }] })
      // A second version, so that pinning the first means something.
      const updated = await t.server.http('PUT', `/api/v1/agents/${agent}`, {
        token: user.token,
        body: { instruction: 'Answer at length.' },
      })
      expect(updated.status, JSON.stringify(updated.body)).toBe(200)
      expect(updated.body.data.version).toBe(2)

      t.upstream.enqueue(
        { kind: 'tool_calls', calls: [{ name: 'weather', arguments: '{"city":"Narvik"}', id: 'call_narvik' }] },
        { kind: 'text', text: 'Narvik: sunny and 21 degrees.' },
      )
      const page = await t.newPage()
      const starts: { key?: string; input: unknown }[] = []
      page.on('request', (request) => {
        if (new URL(request.url()).pathname === '/trpc/runs.agent')
          starts.push({ key: request.headers()['idempotency-key'], input: request.postDataJSON() })
      })
      await t.open(page, user, `/chat/${agent}`)
      await page.getByRole('combobox', { name: 'Version' }).click()
      await page.getByRole('option', { name: 'v1', exact: true }).click()
      await expect.poll(() => page.getByRole('combobox', { name: 'Version' }).inputValue()).toBe('v1')
      await page.getByRole('textbox', { name: 'Message' }).fill('Weather in Narvik?')
      // Two clicks in one task, before the button can show that it is busy: one run.
      await page.getByRole('button', { name: 'Send' }).evaluate((button) => {
        ;(button as { click: () => void }).click()
        ;(button as { click: () => void }).click()
      })
      await page.waitForURL(new RegExp(`/console/chat/${agent}/[0-9a-f-]{36}$`))
      const threadUuid = page.url().split('/').at(-1)!
      // The pin stays for the agent's next messages.
      expect(await page.getByRole('combobox', { name: 'Version' }).inputValue()).toBe('v1')

      // The run waits for a person: the call is shown with Approve and Deny, the thread says it is busy.
      const request = page.getByRole('region', { name: 'Approval of weather' })
      await request.getByText('Waiting for your approval: weather').waitFor()
      await page
        .getByRole('status', { name: 'Thread status' })
        .getByText(/waits for a tool call/)
        .waitFor()
      await t.screenshot(page, 'chat-approval')
      expect(toolRequests).toEqual([])
      await request.getByRole('button', { name: 'Approve…' }).click()
      const dialog = page.getByRole('dialog', { name: 'Approve weather?' })
      await dialog.getByRole('button', { name: 'Approve', exact: true }).click()
      await dialog.waitFor({ state: 'hidden' })
      // The answer goes on in the same stream, then the stored one replaces it.
      await page.getByText('Narvik: sunny and 21 degrees.').waitFor()
      await page.getByText(/gpt-4o-mini · \d+ in/).waitFor()
      expect(toolRequests).toEqual(['/weather?city=Narvik'])
      expect(starts).toHaveLength(1)
      expect(starts[0].key).toMatch(/^[\x20-\x7e]{1,255}$/)
      expect(starts[0].input).toMatchObject({ input: 'Weather in Narvik?', version: 1 })

      const threads = await t.server.http('GET', `/api/v1/threads?agent_uuid=${agent}`, { token: user.token })
      expect(threads.body.data).toHaveLength(1)
      const stored = await messagesOf(t, user, threadUuid)
      expect(stored.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['Weather in Narvik?'])
      const run = await t.server.http('GET', `/api/v1/runs/${stored[0].run_uuid}`, { token: user.token })
      expect(run.body.data.run).toMatchObject({ status: 'succeeded', agent_version: 1 })
      const approvals = await t.server.http('GET', `/api/v1/approvals?run_uuid=${stored[0].run_uuid}`, { token: user.token })
      expect(approvals.body.data.map((a: { status: string; decided_by: { id: number } | null }) => a.status)).toEqual(['approved'])

      // A run started elsewhere makes the thread busy: a message sent meanwhile is refused (409) in
      // words, nothing is stored, and the screen follows the run that holds the thread.
      t.upstream.enqueue({ kind: 'slow', delayMs: 3_000, then: { kind: 'text', text: 'Answered from elsewhere.' } })
      const elsewhere = await t.server.http('POST', `/api/v1/threads/${threadUuid}/run`, {
        token: user.token,
        body: { content: 'From another tab', background: true },
      })
      expect(elsewhere.status, JSON.stringify(elsewhere.body)).toBe(202)
      await page.getByRole('textbox', { name: 'Message' }).fill('Am I too early?')
      await page.getByRole('button', { name: 'Send' }).click()
      const busy = page.getByRole('alert').filter({ hasText: 'The thread is busy' })
      await busy.waitFor()
      await busy.getByText(/Your message was not sent/).waitFor()
      await page.getByRole('article', { name: 'Answer of Careful forecaster (being written)' }).waitFor()
      await t.screenshot(page, 'chat-busy')
      await page.getByText('Answered from elsewhere.').waitFor()
      await page.getByRole('button', { name: 'Send' }).waitFor()
      const after = await messagesOf(t, user, threadUuid)
      expect(after.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['Weather in Narvik?', 'From another tab'])

      // Over a budget: the 429 says the budget and when to try again (its Retry-After), and stores nothing.
      const budget = await t.server.http('POST', '/api/v1/budgets', {
        token: user.token,
        body: { name: 'Forecast day', scope: 'agent', agent_uuid: agent, period: 'day', limit_tokens: 1 },
      })
      expect(budget.status, JSON.stringify(budget.body)).toBe(201)
      await page.getByRole('button', { name: 'Send' }).click()
      const limited = page.getByRole('alert').filter({ hasText: 'Too many requests' })
      await limited.getByText(/Budget "Forecast day".*Try again (in \d+ (seconds|minutes) \(after|after)/).waitFor()
      await t.screenshot(page, 'chat-budget')
      expect((await messagesOf(t, user, threadUuid)).filter((m) => m.role === 'user')).toHaveLength(2)

      // A model without a credential: the API's own sentence, not "Input validation failed".
      const anthropic = await createAgent(t, user, { name: 'No key here', metadata: { large_language_model: 'claude-sonnet-4-5' } })
      await page.goto(`${t.server.url}/console/chat/${anthropic}`)
      await page.getByRole('textbox', { name: 'Message' }).fill('Hello?')
      await page.getByRole('button', { name: 'Send' }).click()
      await page
        .getByRole('alert')
        .getByText('Claude Sonnet 4.5 has no credential in this workspace: add an account for Anthropic or set the server key')
        .waitFor()
      expect(await page.getByText('Input validation failed').count()).toBe(0)
      await t.screenshot(page, 'chat-no-credential')
      const none = await t.server.http('GET', `/api/v1/threads?agent_uuid=${anthropic}`, { token: user.token })
      expect(none.body.data).toEqual([])
    })
  },
  { TOOL_ALLOW_PRIVATE_NETWORK: 'true', SHUTDOWN_TIMEOUT_MS: String(SHUTDOWN_TIMEOUT_MS) },
)

/** Creates an agent on the upstream's model over REST; answers its uuid. */
async function createAgent(t: ConsoleSuite, user: ConsoleUser, body: Record<string, unknown>): Promise<string> {
  const res = await t.server.http('POST', '/api/v1/agents', {
    token: user.token,
    body: { description: 'Chats in the console tests', instruction: 'Answer briefly.', metadata: { large_language_model: MODEL }, ...body },
  })
  expect(res.status, JSON.stringify(res.body)).toBe(201)
  return String(res.body.data.uuid)
}

/** The thread's stored messages, oldest first. */
async function messagesOf(t: ConsoleSuite, user: ConsoleUser, threadUuid: string): Promise<Stored[]> {
  const res = await t.server.http('GET', `/api/v1/messages?thread_uuid=${threadUuid}&per_page=100`, { token: user.token })
  expect(res.status, JSON.stringify(res.body)).toBe(200)
  return res.body.data as Stored[]
}

const horizontalOverflow = (page: Page) =>
  page.evaluate<number>('document.documentElement.scrollWidth - document.documentElement.clientWidth')
