/**
 * The provider registry (src/models/registry.ts) and the local test model
 * (src/models/local-model.ts): which credential and base URL a model resolves to (the caller's own
 * account > a workspace-visible account > the server's environment), the default model falling
 * back to `local-test-model`, and real calls through the AI SDK's `generateText` / `streamText`:
 * the local model offline, OpenAI and OpenAI-compatible models against a small chat completions
 * server started here.
 */
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http'
import type { AddressInfo } from 'node:net'
import { generateText, streamText, tool } from 'ai'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { z } from 'zod'
import type { Config } from '../src/platform/config.ts'
import { ValidationError } from '../src/platform/errors.ts'
import { LOCAL_MODEL_PREFIX } from '../src/models/local-model.ts'
import { availableModelIds, costOf, modelBySlugSql, resolveModel, resolveReadModel, type CatalogModel, type ModelDeps, type ResolvedModel } from '../src/models/registry.ts'
import type { TestApp, TestUser } from './helpers/app.ts'
import { teamCast } from './helpers/resources.ts'

/** One request the upstream received. */
interface Seen {
  path: string
  headers: IncomingHttpHeaders
  body: { model?: string; stream?: boolean; messages?: unknown[] }
}

/** A chat completions server: answers every POST …/chat/completions (JSON or SSE) and records it. */
async function startUpstream(): Promise<{ url: string; seen: Seen[]; server: Server }> {
  const seen: Seen[] = []
  const server = createServer((req, res) => {
    let raw = ''
    req.on('data', (chunk) => (raw += chunk))
    req.on('end', () => {
      const body = JSON.parse(raw || '{}')
      seen.push({ path: req.url ?? '', headers: req.headers, body })
      if (!req.url?.endsWith('/chat/completions')) {
        res.writeHead(404).end()
        return
      }
      const base = { id: 'chatcmpl-test', created: 1_700_000_000, model: body.model }
      if (body.stream) {
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        const chunk = (data: unknown) => res.write(`data: ${JSON.stringify(data)}\n\n`)
        chunk({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content: 'Hello ' } }] })
        chunk({ ...base, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { content: 'upstream' }, finish_reason: 'stop' }] })
        chunk({ ...base, object: 'chat.completion.chunk', choices: [], usage: { prompt_tokens: 11, completion_tokens: 2, total_tokens: 13 } })
        res.end('data: [DONE]\n\n')
        return
      }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(
        JSON.stringify({
          ...base,
          object: 'chat.completion',
          choices: [{ index: 0, message: { role: 'assistant', content: 'Hello from upstream' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 },
        }),
      )
    })
  })
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, server }
}

describe('llm registry', () => {
  let t: TestApp
  let alice: TestUser
  let bob: TestUser
  let carol: TestUser
  let team: { uuid: string }
  let inTeam: () => Record<string, string>
  let upstream: Awaited<ReturnType<typeof startUpstream>>
  let ids: { alice: number; carol: number; bob: number; team: number; aliceHome: number; bobHome: number }
  let providerUuid: (slug: string) => Promise<string>

  /** The test app's configuration with other server-wide provider settings. */
  const withLlm = (llm: Partial<Config['llm']>): Config => ({ ...t.config, llm: { ...t.config.llm, ...llm } })
  const deps = (config: Config = t.config): ModelDeps => ({ em: t.runtime.orm.em.fork(), config })
  const workspaceId = async (uuid: string) => Number((await t.sql('select id::float8 as id from workspaces where uuid = ?', [uuid]))[0].id)

  beforeAll(async () => {
    ;({ t, alice, bob, carol, team, inTeam } = await teamCast('Registry Team'))
    upstream = await startUpstream()
    ids = {
      alice: alice.id,
      carol: carol.id,
      bob: bob.id,
      team: await workspaceId(team.uuid),
      aliceHome: await workspaceId(alice.workspaceUuid),
      bobHome: await workspaceId(bob.workspaceUuid),
    }
    const providers = (await t.as(alice).providers.list({ per_page: 100 })).data
    providerUuid = async (slug) => providers.find((p) => p.slug === slug)!.uuid
  })
  afterAll(async () => {
    upstream?.server.close()
    await t?.close()
  })

  /** The Authorization header and path of the one request a generateText call sent upstream. */
  async function callUpstream(resolved: { model: Parameters<typeof generateText>[0]['model'] }) {
    const before = upstream.seen.length
    const result = await generateText({ model: resolved.model, prompt: 'Hi there', maxRetries: 0 })
    expect(result.text).toBe('Hello from upstream')
    expect(upstream.seen.length).toBe(before + 1)
    const request = upstream.seen[before]
    return { authorization: request.headers.authorization, path: request.path, model: request.body.model, result }
  }

  describe('credential order (user > workspace > environment)', () => {
    it('uses the environment key, then a workspace-visible account, then the caller\'s own account, skipping the unusable ones', async () => {
      const config = withLlm({ openai: { apiKey: 'sk-env-000000', baseUrl: `${upstream.url}/env/v1` } })
      const openai = await providerUuid('openai')
      const resolve = (userId: number, workspace = ids.team) =>
        resolveModel(deps(config), { workspaceId: workspace, userId, slug: 'gpt-4o-mini', field: ['large_language_model'] })

      const env = await resolve(ids.alice)
      expect(env).toMatchObject({ credential: 'environment', providerSlug: 'openai', driver: 'openai', llm: { slug: 'gpt-4o-mini', modelId: 'gpt-4o-mini' } })
      expect(await callUpstream(env)).toMatchObject({ authorization: 'Bearer sk-env-000000', path: '/env/v1/chat/completions', model: 'gpt-4o-mini' })

      // Not usable for alice: carol's private account, an account without a secret, a deleted
      // account, and an account in another workspace.
      await t.as(carol, inTeam()).accounts.create({ name: 'Carol private', provider_uuid: openai, secret: 'sk-carol-private-0000' })
      await t.as(carol, inTeam()).accounts.create({ name: 'Carol keyless', provider_uuid: openai, visibility: 'workspace' })
      const gone = (await t.as(carol, inTeam()).accounts.create({ name: 'Gone', provider_uuid: openai, secret: 'sk-gone-000000000', visibility: 'workspace' })).data
      await t.as(carol, inTeam()).accounts.delete({ account_uuid: gone.uuid })
      await t.as(alice).accounts.create({ name: 'Alice at home', provider_uuid: openai, secret: 'sk-alice-home-00000' })
      expect((await resolve(ids.alice)).credential).toBe('environment')

      await t.as(carol, inTeam()).accounts.create({
        name: 'Team key',
        provider_uuid: openai,
        secret: 'sk-team-shared-0000',
        visibility: 'workspace',
        base_url: `${upstream.url}/team/v1`,
      })
      const shared = await resolve(ids.alice)
      expect(shared.credential).toBe('workspace')
      expect(await callUpstream(shared)).toMatchObject({ authorization: 'Bearer sk-team-shared-0000', path: '/team/v1/chat/completions' })
      // For carol the team account is her own.
      const carols = await resolve(ids.carol)
      expect(carols.credential).toBe('user')

      await t.as(alice, inTeam()).accounts.create({ name: 'Alice old', provider_uuid: openai, secret: 'sk-alice-older-0000', base_url: `${upstream.url}/old/v1` })
      await t.as(alice, inTeam()).accounts.create({ name: 'Alice new', provider_uuid: openai, secret: 'sk-alice-newer-0000', base_url: `${upstream.url}/new/v1` })
      const own = await resolve(ids.alice)
      expect(own.credential).toBe('user')
      expect(await callUpstream(own)).toMatchObject({ authorization: 'Bearer sk-alice-newer-0000', path: '/new/v1/chat/completions' })

      // Bob (another tenant) in his own workspace still gets the environment.
      expect((await resolve(ids.bob, ids.bobHome)).credential).toBe('environment')
    })

    it('names the field and the provider when an explicitly named model has no credential, without any secret', async () => {
      const error = await resolveModel(deps(), { workspaceId: ids.bobHome, userId: ids.bob, slug: 'claude-sonnet-4-5', field: ['metadata', 'large_language_model'] }).catch(
        (caught: unknown) => caught,
      )
      expect(error).toBeInstanceOf(ValidationError)
      expect((error as ValidationError).issues).toEqual([
        {
          code: 'custom',
          path: ['metadata', 'large_language_model'],
          message: 'Claude Sonnet 4.5 has no credential in this workspace: add an account for Anthropic or set the server key',
        },
      ])
    })

    it('answers "Unknown large language model" for unknown, deleted and other workspaces\' models', async () => {
      const provider = (await t.as(alice, inTeam()).providers.create({ name: 'Team llm', type: 'llm', base_url: `${upstream.url}/custom/v1` })).data
      const model = (
        await t.as(alice, inTeam()).largeLanguageModels.create({ provider_uuid: provider.uuid, slug: 'team-only', name: 'Team only', model_id: 'x', context_window: 100, max_output_tokens: 10 })
      ).data
      const gone = (
        await t.as(alice, inTeam()).largeLanguageModels.create({ provider_uuid: provider.uuid, slug: 'gone-model', name: 'Gone', model_id: 'y', context_window: 100, max_output_tokens: 10 })
      ).data
      await t.as(alice, inTeam()).largeLanguageModels.delete({ model_uuid: gone.uuid })
      expect((await resolveModel(deps(), { workspaceId: ids.team, userId: ids.carol, slug: 'team-only', field: ['m'] })).credential).toBe('none')
      expect((await resolveModel(deps(), { workspaceId: ids.team, userId: ids.carol, slug: model.uuid, field: ['m'] })).llm.slug).toBe('team-only')
      for (const [workspace, slug] of [
        [ids.aliceHome, 'team-only'],
        [ids.bobHome, model.uuid],
        [ids.team, 'gone-model'],
        [ids.team, 'gpt-5'],
        [ids.team, 'gpt-4o\u0000'],
        [ids.team, 'bad\uD800'],
        [ids.team, ''],
        [ids.team, 'a'.repeat(10_000)],
        [ids.team, "gpt-4o' or '1'='1"],
      ] as const) {
        const error = await resolveModel(deps(), { workspaceId: workspace, userId: ids.alice, slug, field: ['large_language_model'] }).catch((caught: unknown) => caught)
        expect(error).toBeInstanceOf(ValidationError)
        expect((error as ValidationError).issues[0]).toMatchObject({ path: ['large_language_model'], message: 'Unknown large language model' })
      }
    })
  })

  describe('a model read within another statement (modelBySlugSql, as a run reads it with its agent)', () => {
    it('resolves exactly as resolveModel does: credential, catalog entry, request sent, or the same error', async () => {
      const withKey = withLlm({ openai: { apiKey: 'sk-env-000000', baseUrl: `${upstream.url}/env/v1` } })
      // No key, the same base URL: no request may leave loopback.
      const withoutKey = withLlm({ openai: { baseUrl: `${upstream.url}/env/v1` } })
      const [gpt] = await t.sql(`select uuid from large_language_models where slug = 'gpt-4o-mini' and workspace_id is null`)
      // Every kind of credential: an own account (alice), a workspace-visible one (carol's), a custom model's provider URL.
      const openai = await providerUuid('openai')
      await t.as(carol, inTeam()).accounts.create({
        name: 'Parity shared',
        provider_uuid: openai,
        secret: 'sk-parity-shared-00',
        visibility: 'workspace',
        base_url: `${upstream.url}/parity-shared/v1`,
      })
      await t.as(alice, inTeam()).accounts.create({ name: 'Parity own', provider_uuid: openai, secret: 'sk-parity-own-0000', base_url: `${upstream.url}/parity-own/v1` })
      // A member with no account of their own: the workspace's account serves them.
      const dave = await t.make.user({ name: 'Dave Parity' })
      await t.make.member(team, alice, dave)
      const provider = (await t.as(alice, inTeam()).providers.create({ name: 'Parity llm', type: 'llm', base_url: `${upstream.url}/parity-custom/v1` })).data
      await t.as(alice, inTeam()).largeLanguageModels.create({
        provider_uuid: provider.uuid,
        slug: 'parity-model',
        name: 'Parity',
        model_id: 'parity-x',
        context_window: 100,
        max_output_tokens: 10,
      })
      type Viewer = { workspaceId: number; userId: number; slug: string | null }
      const viaRead = async (config: Config, o: Viewer) => {
        // As the agent's statement reads it: the named slug, else the default.
        const lookup = modelBySlugSql({ sql: '?', params: [o.slug ?? config.llm.defaultModel] }, o)
        const [row] = await t.sql(`select ${lookup.sql} as model`, lookup.params)
        return resolveReadModel(deps(config), { ...o, field: ['m'] }, row.model)
      }
      const outcome = (resolving: Promise<ResolvedModel>) =>
        resolving.then(
          async (resolved) => {
            const { credential, llm, providerSlug, driver } = resolved
            const sent = driver === 'local' ? null : await callUpstream(resolved)
            return { credential, llm, providerSlug, driver, sent: sent && { authorization: sent.authorization, path: sent.path, model: sent.model } }
          },
          (error: unknown) => ({ error: error instanceof ValidationError ? error.issues : String(error) }),
        )
      let compared = 0
      const seen = new Set<string>()
      for (const config of [withKey, withoutKey]) {
        for (const [workspaceId, userId] of [
          [ids.team, ids.alice],
          [ids.team, ids.carol],
          [ids.team, dave.id],
          [ids.bobHome, ids.bob],
          [ids.aliceHome, ids.alice],
        ]) {
          for (const slug of [null, 'gpt-4o-mini', 'parity-model', 'claude-sonnet-4-5', 'no-such-model', gpt.uuid as string]) {
            const o = { workspaceId, userId, slug }
            const expected = await outcome(resolveModel(deps(config), { ...o, field: ['m'] }))
            expect(await outcome(viaRead(config, o)), JSON.stringify(o)).toEqual(expected)
            seen.add('error' in expected ? 'error' : `${expected.credential}:${expected.llm.slug}`)
            compared += 1
          }
        }
      }
      expect(compared).toBe(60)
      // The matrix reached every credential kind, the default's fallback and the errors.
      expect([...seen].sort()).toEqual(
        ['environment:gpt-4o-mini', 'error', 'none:local-test-model', 'none:parity-model', 'user:gpt-4o-mini', 'workspace:gpt-4o-mini'].sort(),
      )
    })
  })

  describe('base URL precedence (account > environment > provider)', () => {
    it('sends a custom openai-driver provider to its own base URL, never with the environment key or base URL', async () => {
      const config = withLlm({ openai: { apiKey: 'sk-env-must-not-leak', baseUrl: `${upstream.url}/env/v1` } })
      const provider = (
        await t.as(bob).providers.create({ name: 'Bob gateway', type: 'llm', driver: 'openai', base_url: `${upstream.url}/provider/v1` })
      ).data
      await t.as(bob).largeLanguageModels.create({ provider_uuid: provider.uuid, slug: 'bob-gpt', name: 'Bob GPT', model_id: 'gpt-bob', context_window: 1000, max_output_tokens: 100 })
      const resolve = () => resolveModel(deps(config), { workspaceId: ids.bobHome, userId: ids.bob, slug: 'bob-gpt', field: ['m'] })
      const error = await resolve().catch((caught: unknown) => caught)
      expect(error).toBeInstanceOf(ValidationError)
      expect((error as Error).message).toBe('Bob GPT has no credential in this workspace: add an account for Bob gateway or set the server key')

      await t.as(bob).accounts.create({ name: 'Bob gateway key', provider_uuid: provider.uuid, secret: 'sk-bob-gateway-000' })
      const viaProvider = await resolve()
      expect(await callUpstream(viaProvider)).toMatchObject({ authorization: 'Bearer sk-bob-gateway-000', path: '/provider/v1/chat/completions', model: 'gpt-bob' })
    })

    it('uses the environment base URL for a built-in provider when the account gives none, and the account\'s when it does', async () => {
      const openai = await providerUuid('openai')
      const config = withLlm({ openai: { baseUrl: `${upstream.url}/env/v1` } })
      const account = (await t.as(bob).accounts.create({ name: 'Bob openai', provider_uuid: openai, secret: 'sk-bob-openai-0000' })).data
      const resolve = () => resolveModel(deps(config), { workspaceId: ids.bobHome, userId: ids.bob, slug: 'gpt-4o', field: ['m'] })
      expect(await callUpstream(await resolve())).toMatchObject({ authorization: 'Bearer sk-bob-openai-0000', path: '/env/v1/chat/completions', model: 'gpt-4o' })
      await t.as(bob).accounts.update({ account_uuid: account.uuid, base_url: `${upstream.url}/account/v1` })
      expect(await callUpstream(await resolve())).toMatchObject({ path: '/account/v1/chat/completions' })
    })

    it('resolves the openai-compatible default model from OPENAI_COMPATIBLE_BASE_URL without a key, or an account with its key, streaming through streamText', async () => {
      const none = await resolveModel(deps(), { workspaceId: ids.bobHome, userId: ids.bob, slug: 'openai-compatible-default', field: ['m'] }).catch(
        (caught: unknown) => caught,
      )
      expect(none).toBeInstanceOf(ValidationError)

      const config = withLlm({ openaiCompatible: { baseUrl: `${upstream.url}/compat/v1` } })
      const keyless = await resolveModel(deps(config), { workspaceId: ids.bobHome, userId: ids.bob, slug: 'openai-compatible-default', field: ['m'] })
      expect(keyless).toMatchObject({ credential: 'none', driver: 'openai-compatible' })
      const request = await callUpstream(keyless)
      expect(request).toMatchObject({ authorization: undefined, path: '/compat/v1/chat/completions', model: 'default' })

      await t.as(bob).accounts.create({ name: 'Bob LM Studio', provider_uuid: await providerUuid('openai-compatible'), secret: 'lm-studio-key-000', base_url: `${upstream.url}/lmstudio/v1` })
      const withAccount = await resolveModel(deps(config), { workspaceId: ids.bobHome, userId: ids.bob, slug: 'openai-compatible-default', field: ['m'] })
      expect(withAccount.credential).toBe('user')
      const before = upstream.seen.length
      const streamed = streamText({ model: withAccount.model, prompt: 'Stream please', maxRetries: 0 })
      const deltas: string[] = []
      for await (const delta of streamed.textStream) deltas.push(delta)
      expect(deltas.join('')).toBe('Hello upstream')
      expect(await streamed.usage).toMatchObject({ inputTokens: 11, outputTokens: 2 })
      expect(upstream.seen[before]).toMatchObject({ path: '/lmstudio/v1/chat/completions', headers: { authorization: 'Bearer lm-studio-key-000' }, body: { stream: true } })
    })

    it('resolves the built-in Ollama model without any key, at OLLAMA_BASE_URL', async () => {
      const config = withLlm({ ollama: { baseUrl: `${upstream.url}/ollama/v1` } })
      const llama = await resolveModel(deps(config), { workspaceId: ids.bobHome, userId: ids.bob, slug: 'llama3.2', field: ['m'] })
      expect(llama).toMatchObject({ credential: 'none', driver: 'ollama', providerSlug: 'ollama' })
      expect(await callUpstream(llama)).toMatchObject({ authorization: undefined, path: '/ollama/v1/chat/completions', model: 'llama3.2' })
    })
  })

  describe('the default model (slug null)', () => {
    // carol's primary workspace holds no accounts.
    const resolveDefault = async (config: Config) =>
      resolveModel(deps(config), { workspaceId: await workspaceId(carol.workspaceUuid), userId: ids.carol, slug: null, field: ['large_language_model'] })

    it('is DEFAULT_MODEL when it has a usable credential, else local-test-model', async () => {
      expect(t.config.llm.defaultModel).toBe('gpt-4o-mini')
      const fallback = await resolveDefault(t.config)
      expect(fallback).toMatchObject({ credential: 'none', driver: 'local', providerSlug: 'local', llm: { slug: 'local-test-model' } })
      const keyed = await resolveDefault(withLlm({ openai: { apiKey: 'sk-env-default-00' } }))
      expect(keyed).toMatchObject({ credential: 'environment', llm: { slug: 'gpt-4o-mini' } })
      expect((await resolveDefault(withLlm({ defaultModel: 'llama3.2' }))).llm.slug).toBe('llama3.2')
      expect((await resolveDefault(withLlm({ defaultModel: 'no-such-model' }))).llm.slug).toBe('local-test-model')
      expect((await resolveDefault(withLlm({ defaultModel: 'claude-haiku-4-5' }))).llm.slug).toBe('local-test-model')
    })
  })

  describe('the local test model through the AI SDK', () => {
    const local = () => resolveModel(deps(), { workspaceId: ids.bobHome, userId: ids.bob, slug: 'local-test-model', field: ['m'] })

    it('answers deterministically through generateText, with usage from the prompt length, finish reason stop', async () => {
      const { model, llm } = await local()
      expect(llm).toMatchObject({ slug: 'local-test-model', contextWindow: 8192, inputPricePerMillion: 0, supportsTools: true })
      const system = 'You are terse.'
      const result = await generateText({
        model,
        system,
        messages: [
          { role: 'user', content: 'first question' },
          { role: 'assistant', content: 'first answer' },
          { role: 'user', content: 'What is 2 + 2?' },
        ],
      })
      const answer = `${LOCAL_MODEL_PREFIX}What is 2 + 2?`
      expect(result.text).toBe(answer)
      expect(result.finishReason).toBe('stop')
      const promptChars = system.length + 'first question'.length + 'first answer'.length + 'What is 2 + 2?'.length
      expect(result.usage).toMatchObject({ inputTokens: Math.ceil(promptChars / 4), outputTokens: Math.ceil(answer.length / 4) })
      const again = await generateText({ model, system, messages: [{ role: 'user', content: 'What is 2 + 2?' }] })
      expect(again.text).toBe(answer)
    })

    it('streams the same answer in several deltas through streamText, repeating at most 200 characters, never calling tools', async () => {
      const { model } = await local()
      const long = `${'é'.repeat(150)}${'😀'.repeat(100)}`
      const calls: unknown[] = []
      const result = streamText({
        model,
        prompt: long,
        tools: { lookup: tool({ description: 'Looks things up', inputSchema: z.object({ q: z.string() }), execute: async (input) => calls.push(input) }) },
      })
      const deltas: string[] = []
      for await (const delta of result.textStream) deltas.push(delta)
      const answer = `${LOCAL_MODEL_PREFIX}${'é'.repeat(150)}${'😀'.repeat(50)}`
      expect(deltas.length).toBeGreaterThan(1)
      expect(deltas.join('')).toBe(answer)
      expect(await result.finishReason).toBe('stop')
      expect(await result.toolCalls).toEqual([])
      expect(calls).toEqual([])
      expect(await result.usage).toMatchObject({ inputTokens: Math.ceil(250 / 4), outputTokens: Math.ceil(Array.from(answer).length / 4) })
    })

    it('answers an empty echo when there is no user message', async () => {
      const { model } = await local()
      const result = await generateText({ model, system: 'Only a system prompt', messages: [{ role: 'assistant', content: 'Hello' }] })
      expect(result.text).toBe(LOCAL_MODEL_PREFIX)
    })
  })

  describe('availableModelIds', () => {
    it('agrees with resolveModel for every model, in one query', async () => {
      const config = withLlm({ anthropic: { apiKey: 'sk-ant-env-0000' } })
      const rows = await t.sql(
        `select m.id::float8 as id, m.slug from large_language_models m join providers p on p.id = m.provider_id
         where m.deleted_at is null and p.deleted_at is null and (m.workspace_id is null or m.workspace_id = ?)`,
        [ids.bobHome],
      )
      const em = t.runtime.orm.em.fork()
      const available = await availableModelIds({ em, config }, { workspaceId: ids.bobHome, userId: ids.bob, modelIds: rows.map((row) => Number(row.id)) })
      for (const row of rows) {
        const resolved = await resolveModel(deps(config), { workspaceId: ids.bobHome, userId: ids.bob, slug: String(row.slug), field: ['m'] }).then(
          () => true,
          () => false,
        )
        expect([row.slug, available.has(Number(row.id))]).toEqual([row.slug, resolved])
      }
      expect(available.size).toBeGreaterThan(3)
      expect(await availableModelIds({ em, config }, { workspaceId: ids.bobHome, userId: ids.bob, modelIds: [] })).toEqual(new Set())
    })
  })

  it('costOf prices prompt and completion tokens per million, rounded to 6 decimals', () => {
    const llm = { inputPricePerMillion: 0.15, outputPricePerMillion: 0.6 } as CatalogModel
    expect(costOf(llm, { promptTokens: 1000, completionTokens: 500 })).toBe(0.00045)
    expect(costOf(llm, { promptTokens: 1, completionTokens: 1 })).toBe(0.000001)
    expect(costOf(llm, { promptTokens: 0, completionTokens: 0 })).toBe(0)
    expect(costOf({ ...llm, inputPricePerMillion: 3, outputPricePerMillion: 15 }, { promptTokens: 1_234_567, completionTokens: 89_012 })).toBe(5.038881)
  })
})
