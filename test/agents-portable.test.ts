/**
 * Portable agents (docs/api/versions.md, "Portable agents: export and import";
 * src/agents/agent-portable.service.ts): the exported document's shape and header, that it holds
 * nothing of the exporting service (no uuid, secret, account, user, workspace or media key), the
 * import's tools, inactive workflows, bindings, queued knowledge and warnings, the round trip
 * (export, import, export: the same document but `exported_at`), each validation rule with its
 * field path and nothing made, the one transaction, 401, another tenant's 404, a read share's
 * export and a read-only token's 403; and docs/agent-document.schema.json against the zod schema.
 */
import { readFileSync } from 'node:fs'
import { createServer, type Server } from 'node:http'
import { Ajv2020 } from 'ajv/dist/2020.js'
import formats from 'ajv-formats'
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest'
import { agentDocumentJsonSchema, ImportAgentInput } from '../src/agents/agent-portable.schema.ts'
import { VALIDATION_MESSAGE } from '../src/trpc/errors.ts'
import { createTestApp, type HttpResult, type TestApp } from './helpers/app.ts'
import { makeAgent, member, readOnlyToken, type Member } from './helpers/agents.ts'
import { expectErrorBody, hiddenCheck, trpcError } from './helpers/expect.ts'
import { agentId, insertMedia } from './helpers/rows.ts'

const UUID_ANYWHERE = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i
const ACCOUNT_SECRET = 'sk-alice-SECRET-0123456789'
const NIL_UUID = '00000000-0000-0000-0000-000000000000'
const expectHidden = hiddenCheck('Agent')

type Doc = Record<string, any>

describe('portable agents (GET agents/{agent_uuid}/export, POST agents/import)', () => {
  let t: TestApp
  let site: Server
  let siteUrl: string
  /** Owner of the source agent. */
  let alice: Member
  /** Another tenant, given a read share of the source agent. */
  let bob: Member
  /** Another tenant with no share. */
  let carol: Member
  /** Providers of alice's workspace: one that needs an account, one without authentication, one more. */
  let keyed: { uuid: string; slug: string; name: string }
  let open: { uuid: string; slug: string; name: string }
  let account: { uuid: string }
  let otherAccount: { uuid: string }
  let bobProvider: { uuid: string; slug: string }
  let bobAccount: { uuid: string }
  let source: { uuid: string; name: string }
  let exported: HttpResult
  let doc: Doc

  const http = (...args: Parameters<TestApp['http']>) => t.http(...args)
  const post = async (user: { token: string }, path: string, body: Record<string, unknown>) => {
    const res = await http('POST', path, { token: user.token, body })
    expect(res.status, `${path}: ${JSON.stringify(res.body)}`).toBe(201)
    return res.body.data
  }
  const exportOf = (user: { token: string }, uuid: string) => http('GET', `/api/v1/agents/${uuid}/export`, { token: user.token })
  const importAs = (user: { token: string }, body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    http('POST', '/api/v1/agents/import', { token: user.token, body, headers })
  /** The document without its export time, as JSON text (key order included). */
  const text = (document: Doc) => JSON.stringify({ ...document, exported_at: undefined })

  /** Rows of every table an import writes. */
  const counts = async () => {
    const [row] = await t.sql(`select (select count(*) from agents)::int as agents, (select count(*) from tools)::int as tools,
      (select count(*) from workflows)::int as workflows, (select count(*) from knowledge_documents)::int as knowledge,
      (select count(*) from agent_versions)::int as versions, (select count(*) from agent_tools)::int as bindings`)
    return row
  }
  /** A 400 whose first issue names `path`, after which nothing was made. */
  const expectRefused = async (user: { token: string }, body: Record<string, unknown>, path: (string | number)[], message?: RegExp) => {
    const before = await counts()
    const res = await importAs(user, body)
    expectErrorBody(res, 400, 'BAD_REQUEST', VALIDATION_MESSAGE)
    expect(res.body.issues[0].path, JSON.stringify(res.body.issues)).toEqual(path)
    if (message) expect(res.body.issues[0].message).toMatch(message)
    expect(await counts()).toEqual(before)
  }

  beforeAll(async () => {
    site = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('The runbook says: restart the pump.'))
    await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve))
    const address = site.address()
    siteUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`
    t = await createTestApp({ TOOL_ALLOW_PRIVATE_NETWORK: 'true' })
    alice = await member(t, await t.make.user({ name: 'Alice Exporter' }))
    bob = await member(t, await t.make.user({ name: 'Bob Importer' }))
    carol = await member(t, await t.make.user({ name: 'Carol Outsider' }))

    keyed = await post(alice, '/api/v1/providers', { name: 'Weather API', type: 'tool', base_url: 'https://api.example.com' })
    open = await post(alice, '/api/v1/providers', {
      name: 'Open data',
      type: 'tool',
      base_url: 'https://data.example.com',
      auth_scheme: 'none',
    })
    const third = await post(alice, '/api/v1/providers', { name: 'Stocks', type: 'tool', base_url: 'https://stocks.example.com' })
    account = await post(alice, '/api/v1/accounts', { name: 'Weather key', provider_uuid: keyed.uuid, secret: ACCOUNT_SECRET })
    otherAccount = await post(alice, '/api/v1/accounts', { name: 'Stocks key', provider_uuid: third.uuid, secret: 'sk-stocks-0000000000' })
    bobProvider = await post(bob, '/api/v1/providers', { name: 'Weather API', type: 'tool', base_url: 'https://api.example.com' })
    bobAccount = await post(bob, '/api/v1/accounts', { name: 'Bob key', provider_uuid: bobProvider.uuid, secret: 'sk-bob-0000000000' })

    const weather = await post(alice, '/api/v1/tools', {
      name: 'Weather lookup',
      description: 'The weather of a city',
      url: 'https://api.example.com/weather?q={{city}}',
      provider_uuid: keyed.uuid,
      input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
      requires_approval: true,
      metadata: { team: 'ops' },
    })
    const docs = await post(alice, '/api/v1/tools', {
      name: 'Docs search',
      type: 'mcp',
      url: 'https://mcp.example.com/mcp',
      allowed_tools: ['search'],
    })
    const data = await post(alice, '/api/v1/tools', {
      name: 'Open data',
      url: 'https://data.example.com/sets/{{id}}',
      method: 'POST',
      provider_uuid: open.uuid,
    })
    const prompt = await post(alice, '/api/v1/prompts', { name: 'Summary', content: 'Summarise {{text}}' })
    const [model] = await t.sql(`select uuid::text as uuid from large_language_models where slug = 'local-test-model'`)
    source = await makeAgent(t, alice, {
      name: 'Ops helper',
      description: 'Helps the ops team',
      instruction: 'Answer briefly.',
      metadata: {
        role: 'Operator',
        conversation_starters: ['Is the pump up?'],
        large_language_model: String(model.uuid),
        team: 'night shift',
      },
      profile_photo_config: { emoji: '🛠', background_color: '#112233' },
      visibility: 'workspace',
      tools: [{ tool_uuid: weather.uuid, account_uuid: account.uuid }, { tool_uuid: docs.uuid }, { tool_uuid: data.uuid }],
    })
    const thread = await post(alice, '/api/v1/threads', { agent_uuid: source.uuid })
    const workflow = await post(alice, '/api/v1/workflows', {
      name: 'Escalate',
      description: 'Asks the agent, summarises, posts',
      settings: { timeout_seconds: 60, editor: 'v2' },
      nodes: [
        { id: 'start', type: 'manual_trigger', parameters: {} },
        { id: 'delegate', type: 'run_agent', parameters: { agent_uuid: source.uuid, message: 'Status?', thread_uuid: thread.uuid } },
        { id: 'ask', type: 'run_prompt', parameters: { prompt_uuid: prompt.uuid, input: { text: '=$.text' } } },
        {
          id: 'fetch',
          type: 'http_request',
          parameters: {
            method: 'POST',
            url: 'https://ops:SECRET-pw@hooks.example.com/alert',
            headers: { Authorization: 'Bearer sk-header-SECRET', 'x-trace': 'keep-me' },
            query: { api_key: 'sk-query-SECRET', page: 1 },
            account_uuid: account.uuid,
            body: { level: 'high' },
          },
        },
      ],
      edges: [
        { source: 'start', target: 'delegate' },
        { source: 'delegate', target: 'ask' },
        { source: 'ask', target: 'fetch' },
      ],
    })
    const updated = await http('PUT', `/api/v1/agents/${source.uuid}`, {
      token: alice.token,
      body: { workflows: [{ workflow_uuid: workflow.uuid }] },
    })
    expect(updated.status, JSON.stringify(updated.body)).toBe(200)
    // Knowledge as ingestion leaves it, oldest first: a text, a URL and an uploaded file.
    const id = await agentId(t, source.uuid)
    const media = await insertMedia(t, { userId: alice.id, workspaceId: alice.wsId, name: 'handbook.pdf' })
    const documents: [string, string, string | null, string | null, string | null, string][] = [
      ['Runbook', 'text', 'Restart the pump when the pressure drops.', null, null, 'ready'],
      [`${siteUrl}/runbook`, 'url', null, `${siteUrl}/runbook`, null, 'failed'],
      ['handbook.pdf', 'file', null, null, media.key, 'queued'],
    ]
    for (const [index, [name, type, sourceText, url, key, status]] of documents.entries()) {
      await t.sql(
        `insert into knowledge_documents (uuid, agent_id, user_id, workspace_id, name, source_type, source_text, url, media_key, mime_type, size_bytes, status, created_at, updated_at)
         values (gen_random_uuid(), ?, ?, ?, ?, ?, ?, ?, ?, 'text/plain', 5, ?, now() - make_interval(mins => ?), now())`,
        [id, alice.id, alice.wsId, name, type, sourceText, url, key, status, 10 - index],
      )
    }
    // The URL is a crawl root with one crawled page: the root travels with its crawl, the page does not.
    const [root] = await t.sql(
      `update knowledge_documents set refresh = 'daily', crawl_max_pages = 20, crawl_max_depth = 1 where agent_id = ? and source_type = 'url' returning id`,
      [id],
    )
    await t.sql(
      `insert into knowledge_documents (uuid, agent_id, user_id, workspace_id, name, source_type, url, mime_type, size_bytes, status, crawl_root_id, created_at, updated_at)
       values (gen_random_uuid(), ?, ?, ?, ?, 'url', ?, 'text/html', 5, 'ready', ?, now(), now())`,
      [id, alice.id, alice.wsId, `${siteUrl}/runbook/pumps`, `${siteUrl}/runbook/pumps`, root.id],
    )
    exported = await exportOf(alice, source.uuid)
    expect(exported.status, JSON.stringify(exported.body)).toBe(200)
    doc = exported.body
  }, 60_000)

  afterAll(async () => {
    await t?.close()
    await new Promise((resolve) => site?.close(resolve))
  })

  describe('export (GET /api/v1/agents/{agent_uuid}/export)', () => {
    it('answers the document itself, as an attachment', () => {
      expect(exported.headers.get('content-type')).toMatch(/^application\/json/)
      expect(exported.headers.get('content-disposition')).toBe('attachment; filename="ops-helper.agent.json"')
      expect(Object.keys(doc)).toEqual(['format', 'format_version', 'exported_at', 'agent', 'tools', 'workflows', 'knowledge'])
      expect(doc.format).toBe('agent-workspace.agent')
      expect(doc.format_version).toBe(1)
      expect(Date.now() - Date.parse(doc.exported_at)).toBeLessThan(60_000)
      expect(doc.agent).toEqual({
        name: 'Ops helper',
        description: 'Helps the ops team',
        instruction: 'Answer briefly.',
        // The model's uuid travels as its slug.
        metadata: {
          role: 'Operator',
          conversation_starters: ['Is the pump up?'],
          large_language_model: 'local-test-model',
          team: 'night shift',
        },
        profile_photo_config: { emoji: '🛠', background_color: '#112233' },
        visibility: 'workspace',
      })
    })

    it('lists the tools in the agent order with refs and providers by slug, the workflows, and every knowledge document oldest first', () => {
      expect(doc.tools).toEqual([
        {
          ref: 'tool-1',
          name: 'Weather lookup',
          description: 'The weather of a city',
          type: 'api',
          method: 'GET',
          url: 'https://api.example.com/weather?q={{city}}',
          input_schema: { type: 'object', required: ['city'], properties: { city: { type: 'string' } } },
          allowed_tools: null,
          requires_approval: true,
          metadata: { team: 'ops' },
          provider: { slug: keyed.slug, name: 'Weather API' },
        },
        {
          ref: 'tool-2',
          name: 'Docs search',
          description: '',
          type: 'mcp',
          method: 'POST',
          url: 'https://mcp.example.com/mcp',
          input_schema: {},
          allowed_tools: ['search'],
          requires_approval: false,
          metadata: {},
          provider: null,
        },
        expect.objectContaining({ ref: 'tool-3', name: 'Open data', method: 'POST', provider: { slug: open.slug, name: 'Open data' } }),
      ])
      expect(doc.workflows).toHaveLength(1)
      expect(doc.workflows[0]).toMatchObject({ ref: 'workflow-1', name: 'Escalate', description: 'Asks the agent, summarises, posts' })
      expect(doc.workflows[0].settings).toEqual({ timeout_seconds: 60, editor: 'v2' })
      expect(doc.workflows[0].edges).toEqual([
        { source: 'start', target: 'delegate' },
        { source: 'delegate', target: 'ask' },
        { source: 'ask', target: 'fetch' },
      ])
      expect(doc.knowledge).toEqual([
        { name: 'Runbook', source_type: 'text', url: null, text: 'Restart the pump when the pressure drops.' },
        {
          name: `${siteUrl}/runbook`,
          source_type: 'url',
          url: `${siteUrl}/runbook`,
          text: null,
          refresh: 'daily',
          crawl: { max_pages: 20, max_depth: 1 },
        },
        { name: 'handbook.pdf', source_type: 'file', url: null, text: null },
      ])
    })

    it('replaces what workflow nodes name of this service: the agent itself by "self", other rows by null, credentials dropped', () => {
      const nodes = Object.fromEntries(doc.workflows[0].nodes.map((node: Doc) => [node.id, node.parameters]))
      expect(nodes.start).toEqual({})
      // The thread was this service's: each run of the imported node starts a new one.
      expect(nodes.delegate).toEqual({ agent_uuid: 'self', message: 'Status?' })
      expect(nodes.ask).toEqual({ prompt_uuid: null, input: { text: '=$.text' } })
      expect(nodes.fetch).toEqual({
        method: 'POST',
        url: 'https://hooks.example.com/alert',
        headers: { 'x-trace': 'keep-me' },
        query: { page: 1 },
        account_uuid: null,
        body: { level: 'high' },
      })
    })

    it('holds no uuid, secret, account, user, workspace or media key of this service', async () => {
      const json = JSON.stringify(doc)
      expect(json).not.toMatch(UUID_ANYWHERE)
      expect(json).not.toContain('SECRET')
      const rows = await t.sql(
        `select uuid::text as value from agents union all select uuid::text from tools union all select uuid::text from workflows
         union all select uuid::text from accounts union all select uuid::text from providers union all select uuid::text from prompts
         union all select uuid::text from threads union all select uuid::text from knowledge_documents union all select uuid::text from workspaces
         union all select uuid::text from large_language_models union all select key from media union all select email from users
         union all select name from workspaces union all select name from accounts`,
      )
      expect(rows.length).toBeGreaterThan(20)
      for (const { value } of rows) expect(json, String(value)).not.toContain(String(value))
    })

    it('validates against docs/agent-document.schema.json, which is what the zod schema gives', () => {
      const committed = JSON.parse(readFileSync(new URL('../docs/agent-document.schema.json', import.meta.url), 'utf8'))
      expect(committed).toEqual(agentDocumentJsonSchema())
      const ajv = new Ajv2020({ strict: false, allErrors: true })
      formats.default(ajv)
      const validate = ajv.compile(committed)
      expect(validate(doc), ajv.errorsText(validate.errors)).toBe(true)
    })

    it('answers 401 without a token and 404 for an agent the caller cannot see', async () => {
      expectErrorBody(await http('GET', `/api/v1/agents/${source.uuid}/export`), 401, 'UNAUTHORIZED')
      expectHidden(await exportOf(carol, source.uuid), source)
    })
  })

  describe('import (POST /api/v1/agents/import)', () => {
    it('round trip: the import makes version 1 with new tools, inactive workflows, bound accounts and queued knowledge; its export is the same document', async () => {
      const queue = vi.spyOn(t.runtime.knowledge, 'queue')
      // Files do not travel: a document without them comes back whole.
      const document = { ...doc, knowledge: doc.knowledge.filter((item: Doc) => item.source_type !== 'file') }
      const res = await importAs(alice, { document, accounts: { 'tool-1': account.uuid } })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      expect(Object.keys(res.body).sort()).toEqual(['data', 'warnings'])
      const agent = res.body.data
      expect(agent).toMatchObject({ name: 'Ops helper', version: 1, visibility: 'workspace', is_owner: true })
      expect(agent.workspace.uuid).toBe(alice.workspaceUuid)
      expect(agent.tools.map((tool: Doc) => tool.name)).toEqual(['Weather lookup', 'Docs search', 'Open data'])
      expect(agent.tools[0].pivot_account.uuid).toBe(account.uuid)
      expect(agent.tools[0].uuid).not.toBe(doc.tools[0].uuid)
      expect(agent.workflows.map((workflow: Doc) => [workflow.name, workflow.is_active])).toEqual([['Escalate', false]])
      expect(res.body.warnings).toEqual([
        'workflow-1 "Escalate": node "ask" runs a prompt that did not travel: set its prompt_uuid before activating the workflow',
        'workflow-1 "Escalate": node "fetch" uses an account that did not travel: set its account_uuid before activating the workflow',
      ])
      // The agent's own node runs the new agent; what did not travel names nothing.
      const [stored] = await t.sql(`select w.nodes from workflows w where w.uuid = ?`, [agent.workflows[0].uuid])
      const nodes = typeof stored.nodes === 'string' ? JSON.parse(stored.nodes) : stored.nodes
      expect(nodes.find((node: Doc) => node.id === 'delegate').parameters.agent_uuid).toBe(agent.uuid)
      expect(nodes.find((node: Doc) => node.id === 'ask').parameters.prompt_uuid).toBe(NIL_UUID)
      const versions = await t.sql(`select v.version from agent_versions v join agents a on a.id = v.agent_id where a.uuid = ?`, [
        agent.uuid,
      ])
      expect(versions.map((row) => Number(row.version))).toEqual([1])
      // The text and the URL are stored and queued once the import committed.
      const documents = await t.sql(
        `select d.uuid::text as uuid, d.name, d.source_type as type, d.refresh, d.crawl_max_pages as pages from knowledge_documents d join agents a on a.id = d.agent_id
         where a.uuid = ? and d.crawl_root_id is null order by d.id`,
        [agent.uuid],
      )
      expect(documents.map((row) => [row.name, row.type, row.refresh, row.pages === null ? null : Number(row.pages)])).toEqual([
        ['Runbook', 'text', 'never', null],
        [`${siteUrl}/runbook`, 'url', 'daily', 20],
      ])
      // (The knowledge sweep may queue other documents meanwhile.)
      expect(queue.mock.calls.flat(2)).toEqual(expect.arrayContaining(documents.map((row) => row.uuid)))
      queue.mockRestore()

      const again = await exportOf(alice, agent.uuid)
      expect(again.status).toBe(200)
      expect(again.body.exported_at).not.toBe(undefined)
      expect(text(again.body)).toBe(text(document))
    })

    it('makes a tool whose provider needs an account, and none was given, without binding it; a file document is a warning', async () => {
      const weatherTools = async () => {
        const [row] = await t.sql(
          `select count(*)::int as n from tools t join providers p on p.id = t.provider_id where t.name = 'Weather lookup' and p.uuid = ?`,
          [keyed.uuid],
        )
        return Number(row.n)
      }
      const before = await weatherTools()
      const res = await importAs(alice, { document: doc })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      expect(res.body.data.tools.map((tool: Doc) => tool.name)).toEqual(['Docs search', 'Open data'])
      expect(res.body.warnings).toEqual([
        `tool-1 "Weather lookup": its provider "${keyed.slug}" needs an account and none was given: the tool was made but not bound to the agent`,
        'workflow-1 "Escalate": node "ask" runs a prompt that did not travel: set its prompt_uuid before activating the workflow',
        'workflow-1 "Escalate": node "fetch" uses an account that did not travel: set its account_uuid before activating the workflow',
        'knowledge.2 "handbook.pdf": files do not travel in an agent document: upload the file and add it to the agent',
      ])
      expect(await weatherTools()).toBe(before + 1)
    })

    it("in another tenant's workspace: providers are found by slug and bound with the caller's account; a missing provider's tool is made unbound", async () => {
      const before = await t.sql(`select count(*)::int as n from tools where workspace_id = ?`, [bob.wsId])
      const res = await importAs(bob, { document: doc, accounts: { 'tool-1': bobAccount.uuid } })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      const agent = res.body.data
      expect(agent.workspace.uuid).toBe(bob.workspaceUuid)
      expect(agent.tools.map((tool: Doc) => tool.name)).toEqual(['Weather lookup', 'Docs search'])
      expect(agent.tools[0].provider).toEqual({ uuid: bobProvider.uuid, slug: keyed.slug, name: 'Weather API' })
      expect(agent.tools[0].pivot_account.uuid).toBe(bobAccount.uuid)
      expect(res.body.warnings).toEqual([
        `tool-3 "Open data": no provider "${open.slug}" is configured in this workspace: the tool was made without a provider and not bound to the agent`,
        'workflow-1 "Escalate": node "ask" runs a prompt that did not travel: set its prompt_uuid before activating the workflow',
        'workflow-1 "Escalate": node "fetch" uses an account that did not travel: set its account_uuid before activating the workflow',
        'knowledge.2 "handbook.pdf": files do not travel in an agent document: upload the file and add it to the agent',
      ])
      const after = await t.sql(`select count(*)::int as n from tools where workspace_id = ?`, [bob.wsId])
      expect(Number(after[0].n) - Number(before[0].n)).toBe(3)
    })

    it.each([
      ['an unknown format', (d: Doc) => ({ ...d, format: 'someone-else.agent' }), ['document', 'format']],
      ['a newer format_version', (d: Doc) => ({ ...d, format_version: 2 }), ['document', 'format_version']],
      [
        'a tool URL that is no http(s) URL',
        (d: Doc) => ({ ...d, tools: [{ ...d.tools[0], url: 'ftp://example.com/x' }] }),
        ['document', 'tools', 0, 'url'],
      ],
      ['a field the create rules refuse', (d: Doc) => ({ ...d, agent: { ...d.agent, name: ' ' } }), ['document', 'agent', 'name']],
      ['an unknown field', (d: Doc) => ({ ...d, agent: { ...d.agent, uuid: source.uuid } }), ['document', 'agent']],
      ['refs listed twice', (d: Doc) => ({ ...d, tools: [d.tools[1], d.tools[1]] }), ['document', 'tools', 1, 'ref']],
      [
        'a field a tool type does not take',
        (d: Doc) => ({ ...d, tools: [{ ...d.tools[1], method: 'GET' }] }),
        ['document', 'tools', 0, 'method'],
      ],
      [
        'a broken graph',
        (d: Doc) => ({ ...d, workflows: [{ ...d.workflows[0], edges: [{ source: 'start', target: 'nowhere' }] }] }),
        ['document', 'workflows', 0, 'edges', 0, 'target'],
      ],
      [
        'a knowledge URL that cannot be trained',
        (d: Doc) => ({ ...d, knowledge: [d.knowledge[0], { source_type: 'url', url: 'ftp://example.com/a' }] }),
        ['document', 'knowledge', 1, 'url'],
      ],
      [
        'blank knowledge text',
        (d: Doc) => ({ ...d, knowledge: [{ ...d.knowledge[0], text: '   ' }] }),
        ['document', 'knowledge', 0, 'text'],
      ],
      [
        'a URL document with a text',
        (d: Doc) => ({ ...d, knowledge: [{ ...d.knowledge[1], text: 'extra' }] }),
        ['document', 'knowledge', 0, 'text'],
      ],
      [
        'a refresh on a text document',
        (d: Doc) => ({ ...d, knowledge: [{ ...d.knowledge[0], refresh: 'daily' }] }),
        ['document', 'knowledge', 0, 'refresh'],
      ],
      [
        'a crawl on a text document',
        (d: Doc) => ({ ...d, knowledge: [{ ...d.knowledge[0], crawl: { max_pages: 5 } }] }),
        ['document', 'knowledge', 0, 'crawl'],
      ],
      [
        'a crawl of too many pages',
        (d: Doc) => ({ ...d, knowledge: [{ ...d.knowledge[1], crawl: { max_pages: 501 } }] }),
        ['document', 'knowledge', 0, 'crawl', 'max_pages'],
      ],
      [
        'an unknown refresh',
        (d: Doc) => ({ ...d, knowledge: [{ ...d.knowledge[1], refresh: 'monthly' }] }),
        ['document', 'knowledge', 0, 'refresh'],
      ],
      [
        'a text document without its text',
        (d: Doc) => ({ ...d, knowledge: [{ name: 'Notes', source_type: 'text' }] }),
        ['document', 'knowledge', 0, 'text'],
      ],
    ])('refuses %s (400 naming the field), and makes nothing', async (_label, change, path) => {
      await expectRefused(alice, { document: change(doc), accounts: { 'tool-1': account.uuid } }, path)
    })

    it('says which format_version it reads', async () => {
      await expectRefused(
        alice,
        { document: { ...doc, format_version: 2 } },
        ['document', 'format_version'],
        /newer than this service reads \(1\)/,
      )
    })

    it('refuses an account whose key is no tool ref, that the caller cannot use, or of another provider', async () => {
      await expectRefused(
        alice,
        { document: doc, accounts: { 'tool-9': account.uuid } },
        ['accounts', 'tool-9'],
        /No tool of the document has this ref/,
      )
      await expectRefused(
        alice,
        { document: doc, accounts: { 'tool-1': bobAccount.uuid } },
        ['accounts', 'tool-1'],
        /No account you can use/,
      )
      await expectRefused(
        alice,
        { document: doc, accounts: { 'tool-1': otherAccount.uuid } },
        ['accounts', 'tool-1'],
        /does not belong to the tool's provider/,
      )
      // A tool without a provider takes no account.
      await expectRefused(alice, { document: doc, accounts: { 'tool-2': account.uuid } }, ['accounts', 'tool-2'], /does not belong/)
    })

    it('writes everything in one transaction: a failure at its last write leaves nothing', async () => {
      await t.sql(
        `create function portable_test_refuse() returns trigger language plpgsql as $$ begin raise exception 'refused by the test'; end $$`,
      )
      await t.sql(
        `create trigger portable_test_refuse before insert on knowledge_documents for each row execute function portable_test_refuse()`,
      )
      try {
        const before = await counts()
        const error = await trpcError(
          t.as(alice).agents.import(ImportAgentInput.parse({ document: doc, accounts: { 'tool-1': account.uuid } })),
        )
        expect(error.code).toBe('INTERNAL_SERVER_ERROR')
        expect(await counts()).toEqual(before)
      } finally {
        await t.sql(`drop trigger portable_test_refuse on knowledge_documents`)
        await t.sql(`drop function portable_test_refuse()`)
      }
    })

    it('answers 401 without a token', async () => {
      expectErrorBody(await http('POST', '/api/v1/agents/import', { body: { document: doc } }), 401, 'UNAUTHORIZED')
    })
  })

  describe('access', () => {
    it('a read share is enough to export; an import with a read-only token is refused (403) and makes nothing', async () => {
      const shared = await http('POST', `/api/v1/agents/${source.uuid}/share`, {
        token: alice.token,
        body: { entity_type: 'user', entity_id: bob.id, permission: 'read' },
      })
      expect(shared.status, JSON.stringify(shared.body)).toBe(200)
      const res = await exportOf(bob, source.uuid)
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(text(res.body)).toBe(text(doc))
      const before = await counts()
      const readOnly = await readOnlyToken(t, bob)
      expectErrorBody(await importAs(readOnly, { document: res.body }), 403, 'FORBIDDEN')
      expect(await counts()).toEqual(before)
    })

    it('imports into the workspace context; a workspace the caller is not a member of is a 404', async () => {
      const team = await t.make.workspace(alice, { name: 'Imports' })
      const res = await importAs(alice, { document: doc, workspace_uuid: team.uuid, accounts: {} })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      expect(res.body.data.workspace.uuid).toBe(team.uuid)
      expectErrorBody(await importAs(carol, { document: doc, workspace_uuid: team.uuid }), 404, 'NOT_FOUND')
    })
  })
})
