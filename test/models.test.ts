/**
 * Large language models (routers/models.router.ts, src/models/models.service.ts; docs/api/resources.md, "Large language models"): the seeded catalog and the workspace's
 * custom models, `is_available` from the caller's credentials (src/models/registry.ts), and the
 * tenancy and permission rules of docs/api/tenancy.md on custom models.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { countQueries } from './helpers/agents.ts'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { expectErrorBody, expectInvalid, hiddenCheck, ISO_Z, trpcError, UUID } from './helpers/expect.ts'
import { teamCast } from './helpers/resources.ts'

const MODEL_KEYS = [
  'capabilities',
  'context_window',
  'created_at',
  'description',
  'input_price_per_million',
  'is_available',
  'is_builtin',
  'max_output_tokens',
  'model_id',
  'name',
  'output_price_per_million',
  'provider',
  'slug',
  'updated_at',
  'uuid',
]
const BUILTIN_SLUGS = [
  'claude-haiku-4-5',
  'claude-sonnet-4-5',
  'gpt-4.1',
  'gpt-4.1-mini',
  'gpt-4o',
  'gpt-4o-mini',
  'llama3.2',
  'local-test-model',
  'openai-compatible-default',
]
const PATH = '/api/v1/large-language-models'

/** A 404 that says nothing of the hidden model. */
const expectHidden = hiddenCheck('Large language model')

type Listed = { slug: string; uuid: string; is_available: boolean; is_builtin: boolean }
const slugsOf = (res: { body: { data: Listed[] } }) => res.body.data.map((model) => model.slug)
const availability = (res: { body: { data: Listed[] } }) => Object.fromEntries(res.body.data.map((model) => [model.slug, model.is_available]))

describe('large language models', () => {
  let t: TestApp
  let alice: TestUser
  let bob: TestUser
  let carol: TestUser
  let dave: TestUser
  let reader: string
  /** Headers of alice's team workspace: carol `member`, dave `admin`. */
  let inTeam: () => Record<string, string>
  /** alice's custom openai-compatible provider in the team (workspace-visible: carol may read it). */
  let vllm: { uuid: string; slug: string; name: string }
  let openai: { uuid: string }

  beforeAll(async () => {
    ;({ t, alice, bob, carol, dave, reader, inTeam } = await teamCast('Model Team'))
    vllm = (
      await t.as(alice, inTeam()).providers.create({ name: 'Team vLLM', type: 'llm', driver: 'openai-compatible', base_url: 'http://127.0.0.1:9/v1' })
    ).data
    openai = (await t.as(alice).providers.list({ search: 'openai', per_page: 100 })).data.find((p) => p.slug === 'openai')!
  })
  afterAll(async () => t?.close())

  const body = (overrides: Record<string, unknown> = {}) => ({
    provider_uuid: vllm.uuid,
    slug: 'qwen-2.5-7b',
    name: 'Qwen 2.5 7B',
    model_id: 'Qwen/Qwen2.5-7B-Instruct',
    context_window: 32768,
    max_output_tokens: 4096,
    ...overrides,
  })
  let counter = 0
  /** A custom model of alice's in the team, with a fresh slug. */
  const teamModel = async (overrides: Record<string, unknown> = {}) => {
    counter += 1
    return (await t.as(alice, inTeam()).largeLanguageModels.create(body({ slug: `team-model-${counter}`, ...overrides }) as never)).data
  }
  const row = async (uuid: string) =>
    (
      await t.sql(
        `select slug, name, description, model_id, context_window, max_output_tokens, input_price_per_million::text as input,
         supports_tools, supports_vision, supports_json_output, provider_id, deleted_at from large_language_models where uuid = ?`,
        [uuid],
      )
    )[0]

  describe('largeLanguageModels.list (GET /api/v1/large-language-models)', () => {
    it('lists the seeded catalog in the exact shape, sorted by name, the local test model and Ollama available without keys', async () => {
      const res = await t.http('GET', `${PATH}?per_page=100`, { token: bob.token })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(Object.keys(res.body).sort()).toEqual(['data', 'links', 'meta'])
      expect([...slugsOf(res)].sort()).toEqual(BUILTIN_SLUGS)
      expect(res.body.meta).toMatchObject({ total: 9, current_page: 1, per_page: 100, last_page: 1, from: 1, to: 9 })
      const names = res.body.data.map((model: { name: string }) => model.name.toLowerCase())
      expect(names).toEqual([...names].sort())
      for (const model of res.body.data) {
        expect(Object.keys(model).sort()).toEqual(MODEL_KEYS)
        expect(model.is_builtin).toBe(true)
      }
      expect(availability(res)).toEqual({
        'claude-haiku-4-5': false,
        'claude-sonnet-4-5': false,
        'gpt-4.1': false,
        'gpt-4.1-mini': false,
        'gpt-4o': false,
        'gpt-4o-mini': false,
        'llama3.2': true,
        'local-test-model': true,
        'openai-compatible-default': false,
      })
      const local = res.body.data.find((model: Listed) => model.slug === 'local-test-model')
      expect(local).toEqual({
        uuid: local.uuid,
        slug: 'local-test-model',
        name: 'Local test model (does not think)',
        description: expect.stringContaining('offline test model'),
        provider: { uuid: expect.stringMatching(UUID), slug: 'local', name: 'Local test model' },
        model_id: 'local-test-model',
        context_window: 8192,
        max_output_tokens: 1024,
        input_price_per_million: 0,
        output_price_per_million: 0,
        capabilities: { tools: true, vision: false, json_output: false },
        is_builtin: true,
        is_available: true,
        created_at: expect.stringMatching(ISO_Z),
        updated_at: expect.stringMatching(ISO_Z),
      })
      const mini = res.body.data.find((model: Listed) => model.slug === 'gpt-4o-mini')
      expect(mini).toMatchObject({
        provider: { slug: 'openai', name: 'OpenAI' },
        model_id: 'gpt-4o-mini',
        context_window: 128000,
        input_price_per_million: 0.15,
        output_price_per_million: 0.6,
        capabilities: { tools: true, vision: true, json_output: true },
      })
    })

    it('filters by provider slug, search (name or slug, case-insensitive) and is_available; sorts and paginates', async () => {
      const get = (query: string) => t.http('GET', `${PATH}?per_page=100&${query}`, { token: bob.token })
      expect([...slugsOf(await get('provider=openai'))].sort()).toEqual(['gpt-4.1', 'gpt-4.1-mini', 'gpt-4o', 'gpt-4o-mini'])
      expect(slugsOf(await get('provider=nobody'))).toEqual([])
      expect([...slugsOf(await get('search=CLAUDE'))].sort()).toEqual(['claude-haiku-4-5', 'claude-sonnet-4-5'])
      expect([...slugsOf(await get('search=4.1-mini'))]).toEqual(['gpt-4.1-mini'])
      expect(slugsOf(await get('search=%25'))).toEqual([])
      expect([...slugsOf(await get('is_available=true'))].sort()).toEqual(['llama3.2', 'local-test-model'])
      expect([...slugsOf(await get('is_available=1'))].sort()).toEqual(['llama3.2', 'local-test-model'])
      const unavailable = await get('is_available=false')
      expect(unavailable.body.meta.total).toBe(7)
      expect(unavailable.body.data.every((model: Listed) => !model.is_available)).toBe(true)
      expect(slugsOf(await get('provider=openai&is_available=true'))).toEqual([])

      const byWindow = await get('sort=-context_window')
      expect(byWindow.body.data[0].context_window).toBe(1047576)
      const cheapest = await get('sort=input_price_per_million')
      expect(cheapest.body.data.at(-1).slug).toBe('claude-sonnet-4-5')
      const paged = await t.http('GET', `${PATH}?per_page=2&page=2&provider=openai`, { token: bob.token })
      expect(paged.body.meta).toMatchObject({ total: 4, current_page: 2, per_page: 2, last_page: 2, from: 3, to: 4 })
      expect(paged.body.links.prev).toContain('provider=openai')
      expect(paged.body.links.prev).toContain('page=1')
      expect(paged.body.links.next).toBeNull()
    })

    it('reads a page with is_available in two statements (the page and the count), whatever the page size and filters', async () => {
      for (const query of ['per_page=1', 'per_page=100', 'per_page=100&is_available=true&search=g&provider=openai&sort=-name']) {
        const statements = await countQueries(t, async () => {
          expect((await t.http('GET', `${PATH}?${query}`, { token: alice.token, headers: inTeam() })).status).toBe(200)
        })
        expect(statements.filter((sql) => /\bfrom large_language_models m\b/.test(sql)), query).toHaveLength(2)
        expect(statements.filter((sql) => /\baccounts\b/.test(sql) && !/\bfrom large_language_models m\b/.test(sql)), query).toHaveLength(0)
      }
    })

    it.each([
      ['is_available=maybe', 'is_available'],
      ['sort=price', 'sort'],
      ['page=0', 'page'],
      ['per_page=101', 'per_page'],
      ['workspace_uuid=x', 'workspace_uuid'],
    ])('answers 400 for %s', async (query, path) => {
      expectInvalid(await t.http('GET', `${PATH}?${query}`, { token: bob.token }), path)
    })

    it('answers 400 for an unknown parameter and 401 without a token', async () => {
      const unknown = await t.http('GET', `${PATH}?driver=openai`, { token: bob.token })
      expect(unknown.status).toBe(400)
      expect(unknown.body.issues[0]).toMatchObject({ code: 'unrecognized_keys', keys: ['driver'] })
      expectErrorBody(await t.http('GET', PATH), 401, 'UNAUTHORIZED')
    })
  })

  describe('largeLanguageModels.retrieve (GET /api/v1/large-language-models/{model})', () => {
    it('answers the same model by uuid and by slug (dots included), and through tRPC', async () => {
      const bySlug = await t.http('GET', `${PATH}/gpt-4.1-mini`, { token: bob.token })
      expect(bySlug.status, JSON.stringify(bySlug.body)).toBe(200)
      expect(Object.keys(bySlug.body)).toEqual(['data'])
      expect(Object.keys(bySlug.body.data).sort()).toEqual(MODEL_KEYS)
      const byUuid = await t.http('GET', `${PATH}/${bySlug.body.data.uuid}`, { token: bob.token })
      expect(byUuid.body).toEqual(bySlug.body)
      const upper = await t.http('GET', `${PATH}/${bySlug.body.data.uuid.toUpperCase()}`, { token: bob.token })
      expect(upper.body).toEqual(bySlug.body)
      expect((await t.as(bob).largeLanguageModels.retrieve({ model: 'llama3.2' })).data).toMatchObject({ slug: 'llama3.2', is_available: true })
    })

    it('answers 404 for an unknown slug or uuid, 400 for a malformed one, 401 without a token', async () => {
      expectErrorBody(await t.http('GET', `${PATH}/gpt-5-ultra`, { token: bob.token }), 404, 'NOT_FOUND', 'Large language model not found')
      expectErrorBody(await t.http('GET', `${PATH}/0190a000-0000-7000-8000-000000000000`, { token: bob.token }), 404, 'NOT_FOUND')
      expectInvalid(await t.http('GET', `${PATH}/${encodeURIComponent('gpt 4o')}`, { token: bob.token }), 'model')
      expectInvalid(await t.http('GET', `${PATH}/-gpt`, { token: bob.token }), 'model')
      expectInvalid(await t.http('GET', `${PATH}/${'a'.repeat(121)}`, { token: bob.token }), 'model')
      expectErrorBody(await t.http('GET', `${PATH}/gpt-4o`), 401, 'UNAUTHORIZED')
    })
  })

  describe('is_available', () => {
    const availableIn = async (user: TestUser, headers: Record<string, string>, slug = 'gpt-4o-mini') =>
      (await t.http('GET', `${PATH}/${slug}`, { token: user.token, headers })).body.data.is_available

    it("flips with an openai account: the caller's own, a workspace-visible one of another member; not a private one of another, nor one without a secret", async () => {
      expect(await availableIn(alice, inTeam())).toBe(false)
      const keyless = (await t.as(alice, inTeam()).accounts.create({ name: 'No key', provider_uuid: openai.uuid })).data
      expect(await availableIn(alice, inTeam())).toBe(false)
      const own = (await t.as(alice, inTeam()).accounts.create({ name: 'Alice OpenAI', provider_uuid: openai.uuid, secret: 'sk-alice-0123456789' })).data
      expect(await availableIn(alice, inTeam())).toBe(true)
      expect(await availableIn(alice, inTeam(), 'gpt-4.1')).toBe(true)
      expect(await availableIn(alice, inTeam(), 'claude-haiku-4-5')).toBe(false)
      // Private: carol (another member) does not get it; nor does alice in her primary workspace.
      expect(await availableIn(carol, inTeam())).toBe(false)
      expect(await availableIn(alice, {})).toBe(false)
      const list = await t.http('GET', `${PATH}?is_available=true&per_page=100`, { token: alice.token, headers: inTeam() })
      expect([...slugsOf(list)].sort()).toEqual(['gpt-4.1', 'gpt-4.1-mini', 'gpt-4o', 'gpt-4o-mini', 'llama3.2', 'local-test-model'])

      await t.as(alice, inTeam()).accounts.update({ account_uuid: own.uuid, visibility: 'workspace' })
      expect(await availableIn(carol, inTeam())).toBe(true)
      expect(await availableIn(bob, {})).toBe(false)
      await t.as(alice, inTeam()).accounts.delete({ account_uuid: own.uuid })
      expect(await availableIn(alice, inTeam())).toBe(false)
      expect(await availableIn(carol, inTeam())).toBe(false)
      await t.as(alice, inTeam()).accounts.delete({ account_uuid: keyless.uuid })
    })

    it('makes the openai-compatible default model available with an account that gives a base URL', async () => {
      const compatible = (await t.as(dave).providers.list({ search: 'openai-compatible', per_page: 100 })).data.find((p) => p.slug === 'openai-compatible')!
      expect(await availableIn(dave, {}, 'openai-compatible-default')).toBe(false)
      await t.as(dave).accounts.create({ name: 'LM Studio', provider_uuid: compatible.uuid, base_url: 'http://127.0.0.1:1234/v1' })
      expect(await availableIn(dave, {}, 'openai-compatible-default')).toBe(true)
    })

    it('is true for every OpenAI model when the server has OPENAI_API_KEY, and still false for Anthropic', async () => {
      const keyed = await createTestApp({ OPENAI_API_KEY: 'sk-test' })
      try {
        const erin = await keyed.make.user({ name: 'Erin Env' })
        const res = await keyed.http('GET', `${PATH}?per_page=100`, { token: erin.token })
        expect(availability(res)).toMatchObject({
          'gpt-4o-mini': true,
          'gpt-4o': true,
          'gpt-4.1': true,
          'gpt-4.1-mini': true,
          'claude-sonnet-4-5': false,
          'openai-compatible-default': false,
          'local-test-model': true,
        })
        expect(JSON.stringify(res.body)).not.toContain('sk-test')
      } finally {
        await keyed.close()
      }
    })
  })

  describe('largeLanguageModels.create (POST /api/v1/large-language-models)', () => {
    it('answers 201 with the exact shape; team members see it, other workspaces do not', async () => {
      const res = await t.http('POST', PATH, {
        token: alice.token,
        headers: inTeam(),
        body: body({
          description: 'Served by our vLLM',
          input_price_per_million: 0.123456,
          output_price_per_million: 1.5,
          capabilities: { tools: true, json_output: true },
        }),
      })
      expect(res.status, JSON.stringify(res.body)).toBe(201)
      const model = res.body.data
      expect(model).toEqual({
        uuid: expect.stringMatching(UUID),
        slug: 'qwen-2.5-7b',
        name: 'Qwen 2.5 7B',
        description: 'Served by our vLLM',
        provider: { uuid: vllm.uuid, slug: vllm.slug, name: 'Team vLLM' },
        model_id: 'Qwen/Qwen2.5-7B-Instruct',
        context_window: 32768,
        max_output_tokens: 4096,
        input_price_per_million: 0.123456,
        output_price_per_million: 1.5,
        capabilities: { tools: true, vision: false, json_output: true },
        is_builtin: false,
        // A custom openai-compatible provider has its base URL: no key needed.
        is_available: true,
        created_at: expect.stringMatching(ISO_Z),
        updated_at: expect.stringMatching(ISO_Z),
      })
      const forCarol = await t.http('GET', `${PATH}/qwen-2.5-7b`, { token: carol.token, headers: inTeam() })
      expect(forCarol.body.data).toEqual(model)
      const listed = await t.http('GET', `${PATH}?provider=${vllm.slug}`, { token: carol.token, headers: inTeam() })
      expect(slugsOf(listed)).toEqual(['qwen-2.5-7b'])
      expect(await t.http('GET', `${PATH}?per_page=100`, { token: carol.token, headers: inTeam() })).toMatchObject({ body: { meta: { total: 10 } } })
      // alice's primary workspace and another tenant do not see it.
      expectHidden(await t.http('GET', `${PATH}/${model.uuid}`, { token: alice.token }), model)
      expectHidden(await t.http('GET', `${PATH}/qwen-2.5-7b`, { token: bob.token }), model)
      expect(slugsOf(await t.http('GET', `${PATH}?per_page=100`, { token: bob.token }))).not.toContain('qwen-2.5-7b')
    })

    it('defaults: empty description, zero prices, no capabilities; a workspace admin may add models to it', async () => {
      const model = (await t.as(dave, inTeam()).largeLanguageModels.create({ ...body(), slug: 'plain-model', description: null })).data
      expect(model).toMatchObject({
        description: '',
        input_price_per_million: 0,
        output_price_per_million: 0,
        capabilities: { tools: false, vision: false, json_output: false },
      })
    })

    it('lets another workspace use the same slug, and a custom slug never shadows a built-in', async () => {
      const bobProvider = (await t.as(bob).providers.create({ name: 'Bob Ollama', type: 'llm', driver: 'ollama', base_url: 'http://127.0.0.1:11434/v1' })).data
      const bobs = await t.http('POST', PATH, { token: bob.token, body: body({ provider_uuid: bobProvider.uuid }) })
      expect(bobs.status, JSON.stringify(bobs.body)).toBe(201)
      expect(bobs.body.data.provider.slug).toBe(bobProvider.slug)
      expectInvalid(await t.http('POST', PATH, { token: bob.token, body: body({ provider_uuid: bobProvider.uuid, slug: 'gpt-4o' }) }), 'slug')
    })

    it.each([
      ['a missing provider_uuid', { provider_uuid: undefined }, 'provider_uuid'],
      ['a malformed provider_uuid', { provider_uuid: 'team-vllm' }, 'provider_uuid'],
      ['a missing slug', { slug: undefined }, 'slug'],
      ['an upper-case slug', { slug: 'Qwen' }, 'slug'],
      ['a slug with a space', { slug: 'qwen 7b' }, 'slug'],
      ['a slug with a double hyphen', { slug: 'qwen--7b' }, 'slug'],
      ['a slug shaped like a uuid', { slug: '0190a000-0000-7000-8000-000000000000' }, 'slug'],
      ['a slug over 120 characters', { slug: 'a'.repeat(121) }, 'slug'],
      ['a slug of a built-in model', { slug: 'gpt-4o-mini' }, 'slug'],
      ['a missing name', { name: undefined }, 'name'],
      ['a blank name', { name: '   ' }, 'name'],
      ['a name over 255 characters', { name: 'n'.repeat(256) }, 'name'],
      ['a description over 2000 characters', { description: 'd'.repeat(2001) }, 'description'],
      ['a missing model_id', { model_id: undefined }, 'model_id'],
      ['a blank model_id', { model_id: ' ' }, 'model_id'],
      ['a model_id holding a NUL character', { model_id: 'a\u0000b' }, 'model_id'],
      ['a missing context_window', { context_window: undefined }, 'context_window'],
      ['context_window as a string', { context_window: '32768' }, 'context_window'],
      ['context_window 0', { context_window: 0 }, 'context_window'],
      ['a fractional context_window', { context_window: 1.5 }, 'context_window'],
      ['context_window over 100,000,000', { context_window: 100_000_001 }, 'context_window'],
      ['a missing max_output_tokens', { max_output_tokens: undefined }, 'max_output_tokens'],
      ['max_output_tokens over context_window', { context_window: 1000, max_output_tokens: 1001 }, 'max_output_tokens'],
      ['a negative price', { input_price_per_million: -1 }, 'input_price_per_million'],
      ['a price with 7 decimals', { output_price_per_million: 0.1234567 }, 'output_price_per_million'],
      ['a price as a string', { input_price_per_million: '1' }, 'input_price_per_million'],
      ['a price over 100,000', { output_price_per_million: 100_001 }, 'output_price_per_million'],
      ['an unknown capability', { capabilities: { audio: true } }, 'capabilities'],
      ['a capability as a string', { capabilities: { tools: 'true' } }, 'capabilities.tools'],
      ['capabilities as an array', { capabilities: ['tools'] }, 'capabilities'],
    ])('answers 400 naming the field for %s, creating nothing', async (_label, overrides, path) => {
      const res = await t.http('POST', PATH, { token: alice.token, headers: inTeam(), body: body({ name: 'Refused model', ...overrides }) })
      expectInvalid(res, path)
      expect(await t.sql('select 1 from large_language_models where name = ?', ['Refused model'])).toHaveLength(0)
    })

    it('answers 400 naming slug when another model of the workspace has it', async () => {
      const first = await teamModel({ name: 'First holder' })
      const res = await t.http('POST', PATH, { token: dave.token, headers: inTeam(), body: body({ slug: first.slug, name: 'Second holder' }) })
      expectInvalid(res, 'slug')
      expect(res.body.issues[0].message).toBe('The slug has already been taken')
    })

    it("answers 400 naming provider_uuid for a built-in, a tool provider, another tenant's, another workspace's and a deleted provider", async () => {
      const tools = (await t.as(alice, inTeam()).providers.create({ name: 'Team tools', type: 'tool', base_url: 'https://tools.test' })).data
      const bobs = (await t.as(bob).providers.create({ name: 'Bob hidden llm', type: 'llm', base_url: 'https://bob.test/v1' })).data
      const elsewhere = (await t.as(alice).providers.create({ name: 'Alice home llm', type: 'llm', base_url: 'https://home.test/v1' })).data
      const gone = (await t.as(alice, inTeam()).providers.create({ name: 'Gone llm', type: 'llm', base_url: 'https://gone.test/v1' })).data
      await t.as(alice, inTeam()).providers.delete({ provider_uuid: gone.uuid })
      const cases: [string, string][] = [
        [openai.uuid, 'Custom models belong to a custom provider of this workspace'],
        [tools.uuid, 'The provider must be of type "llm"'],
        [bobs.uuid, 'No provider you can use has this uuid'],
        [elsewhere.uuid, 'Custom models belong to a custom provider of this workspace'],
        [gone.uuid, 'No provider you can use has this uuid'],
      ]
      for (const [uuid, message] of cases) {
        const res = await t.http('POST', PATH, { token: alice.token, headers: inTeam(), body: body({ provider_uuid: uuid, slug: 'refused-provider' }) })
        expectInvalid(res, 'provider_uuid')
        expect(res.body.issues[0].message).toBe(message)
        expect(JSON.stringify(res.body)).not.toContain(bobs.name)
      }
      expect(await t.sql(`select 1 from large_language_models where slug = 'refused-provider'`)).toHaveLength(0)
    })

    it('answers 400 for an unknown field, 401 without a token, 403 for a read-only token and for a member who may only read the provider', async () => {
      const unknown = await t.http('POST', PATH, { token: alice.token, headers: inTeam(), body: body({ slug: 'unknown-field', is_builtin: true }) })
      expect(unknown.status).toBe(400)
      expect(unknown.body.issues[0]).toMatchObject({ code: 'unrecognized_keys', keys: ['is_builtin'] })
      expectErrorBody(await t.http('POST', PATH, { body: body({ slug: 'no-token' }) }), 401, 'UNAUTHORIZED')
      expectErrorBody(await t.http('POST', PATH, { token: reader, headers: inTeam(), body: body({ slug: 'read-only' }) }), 403, 'FORBIDDEN')
      expectErrorBody(
        await t.http('POST', PATH, { token: carol.token, headers: inTeam(), body: body({ slug: 'carol-model' }) }),
        403,
        'FORBIDDEN',
        'You may not add models to this provider',
      )
      expect(await t.sql(`select 1 from large_language_models where slug in ('unknown-field', 'no-token', 'read-only', 'carol-model')`)).toHaveLength(0)
    })

    it('answers 404 for a workspace context the caller is not a member of', async () => {
      expect((await t.http('POST', PATH, { token: bob.token, headers: inTeam(), body: body({ slug: 'intruder' }) })).status).toBe(404)
    })
  })

  describe('largeLanguageModels.update (PUT /api/v1/large-language-models/{model_uuid})', () => {
    it('checks each of two concurrent updates of the token limits against the other: never max_output_tokens over context_window', async () => {
      for (let round = 0; round < 3; round++) {
        const model = await teamModel({ context_window: 32768, max_output_tokens: 4096 })
        // Callers, not HTTP: both updates start in the same tick, so their statements interleave.
        const outcomes = await Promise.all([
          t.as(alice, inTeam()).largeLanguageModels.update({ model_uuid: model.uuid, context_window: 8192 }).then(() => 'ok', () => 'refused'),
          t.as(alice, inTeam()).largeLanguageModels.update({ model_uuid: model.uuid, max_output_tokens: 16384 }).then(() => 'ok', () => 'refused'),
        ])
        // Each alone is fine; together, whichever comes second is refused.
        expect(outcomes.sort()).toEqual(['ok', 'refused'])
        const stored = await row(model.uuid)
        expect(Number(stored.max_output_tokens)).toBeLessThanOrEqual(Number(stored.context_window))
      }
    })

    it('keeps omitted fields, clears description with null, merges capabilities', async () => {
      const model = await teamModel({ description: 'Before', capabilities: { tools: true, vision: true }, input_price_per_million: 2 })
      const res = await t.http('PUT', `${PATH}/${model.uuid}`, {
        token: alice.token,
        headers: inTeam(),
        body: { name: 'Renamed', slug: 'renamed-model', description: null, context_window: 65536, capabilities: { vision: false, json_output: true } },
      })
      expect(res.status, JSON.stringify(res.body)).toBe(200)
      expect(res.body.data).toEqual({
        ...model,
        name: 'Renamed',
        slug: 'renamed-model',
        description: '',
        context_window: 65536,
        capabilities: { tools: true, vision: false, json_output: true },
        updated_at: expect.stringMatching(ISO_Z),
      })
      expect((await t.http('GET', `${PATH}/renamed-model`, { token: carol.token, headers: inTeam() })).body.data.uuid).toBe(model.uuid)
      const again = await t.as(dave, inTeam()).largeLanguageModels.update({ model_uuid: model.uuid, output_price_per_million: 0.5 })
      expect(again.data).toMatchObject({ name: 'Renamed', output_price_per_million: 0.5, input_price_per_million: 2 })
    })

    it('moves a model to another custom llm provider of the workspace', async () => {
      const model = await teamModel()
      const other = (await t.as(alice, inTeam()).providers.create({ name: 'Team Anthropic proxy', type: 'llm', driver: 'anthropic', base_url: 'https://proxy.test/v1' })).data
      const res = await t.as(alice, inTeam()).largeLanguageModels.update({ model_uuid: model.uuid, provider_uuid: other.uuid })
      expect(res.data.provider).toEqual({ uuid: other.uuid, slug: other.slug, name: other.name })
      // An anthropic-driver provider needs a key: no account, so not available.
      expect(res.data.is_available).toBe(false)
    })

    it.each([
      ['a taken slug', { slug: 'gpt-4o' }, 'slug'],
      ['a null name', { name: null }, 'name'],
      ['a null context_window', { context_window: null }, 'context_window'],
      ['max_output_tokens over the stored context_window', { max_output_tokens: 40_000 }, 'max_output_tokens'],
      ['a context_window under the stored max_output_tokens', { context_window: 100 }, 'max_output_tokens'],
      ['an unknown provider', { provider_uuid: '00000000-0000-4000-8000-000000000000' }, 'provider_uuid'],
      ['an unknown field', { visibility: 'public' }, ''],
    ])('answers 400 for %s and changes nothing', async (_label, patch, path) => {
      const model = await teamModel()
      const before = await row(model.uuid)
      const res = await t.http('PUT', `${PATH}/${model.uuid}`, { token: alice.token, headers: inTeam(), body: { description: 'changed', ...patch } })
      expectInvalid(res, path)
      expect(await row(model.uuid)).toEqual(before)
    })

    it("answers 403 for a built-in model, a member who may only read the provider and a read-only token; 404 for another tenant's model; 401", async () => {
      const model = await teamModel()
      const before = await row(model.uuid)
      const builtin = (await t.http('GET', `${PATH}/gpt-4o`, { token: alice.token })).body.data
      expectErrorBody(
        await t.http('PUT', `${PATH}/${builtin.uuid}`, { token: alice.token, body: { name: 'Mine now' } }),
        403,
        'FORBIDDEN',
        'Built-in large language models cannot be changed or deleted',
      )
      expectErrorBody(await t.http('PUT', `${PATH}/${model.uuid}`, { token: carol.token, headers: inTeam(), body: { name: 'Carol' } }), 403, 'FORBIDDEN')
      expectErrorBody(await t.http('PUT', `${PATH}/${model.uuid}`, { token: reader, headers: inTeam(), body: { name: 'Reader' } }), 403, 'FORBIDDEN')
      expectHidden(await t.http('PUT', `${PATH}/${model.uuid}`, { token: bob.token, body: { name: 'Stolen' } }), model)
      expectHidden(await t.http('PUT', `${PATH}/${model.uuid}`, { token: alice.token, body: { name: 'Wrong workspace' } }), model)
      expectErrorBody(await t.http('PUT', `${PATH}/${model.uuid}`, { body: { name: 'x' } }), 401, 'UNAUTHORIZED')
      // A slug is no uuid, so the path is only the read's (docs/api/conventions.md, "Errors").
      const bySlug = await t.http('PUT', `${PATH}/qwen-2.5-7b`, { token: alice.token, headers: inTeam(), body: { name: 'x' } })
      expectErrorBody(bySlug, 405, 'METHOD_NOT_SUPPORTED')
      expect(bySlug.headers.get('allow')).toBe('GET')
      expectInvalid(await t.http('PUT', `${PATH}/0123-abcd`, { token: alice.token, headers: inTeam(), body: { name: 'x' } }), 'model_uuid')
      expect(await row(model.uuid)).toEqual(before)
      expect((await row(builtin.uuid)).name).toBe('GPT-4o')
      expect((await trpcError(t.as(carol, inTeam()).largeLanguageModels.update({ model_uuid: model.uuid, name: 'x' }))).code).toBe('FORBIDDEN')
    })
  })

  describe('largeLanguageModels.delete (DELETE /api/v1/large-language-models/{model_uuid})', () => {
    it('soft-deletes (204): gone from retrieve and list; its slug is free again', async () => {
      const model = await teamModel()
      const res = await t.http('DELETE', `${PATH}/${model.uuid}`, { token: alice.token, headers: inTeam() })
      expect(res.status).toBe(204)
      expect(res.body).toBeNull()
      expect((await row(model.uuid)).deleted_at).not.toBeNull()
      expect((await t.http('GET', `${PATH}/${model.uuid}`, { token: alice.token, headers: inTeam() })).status).toBe(404)
      expect(slugsOf(await t.http('GET', `${PATH}?per_page=100`, { token: alice.token, headers: inTeam() }))).not.toContain(model.slug)
      expect((await t.http('DELETE', `${PATH}/${model.uuid}`, { token: alice.token, headers: inTeam() })).status).toBe(404)
      const again = await t.http('POST', PATH, { token: alice.token, headers: inTeam(), body: body({ slug: model.slug }) })
      expect(again.status).toBe(201)
    })

    it("answers 403 for a built-in model, a reading member and a read-only token; 404 for another tenant's; 401", async () => {
      const model = await teamModel()
      const builtin = (await t.http('GET', `${PATH}/local-test-model`, { token: alice.token })).body.data
      expectErrorBody(await t.http('DELETE', `${PATH}/${builtin.uuid}`, { token: alice.token }), 403, 'FORBIDDEN')
      expectErrorBody(await t.http('DELETE', `${PATH}/${model.uuid}`, { token: carol.token, headers: inTeam() }), 403, 'FORBIDDEN')
      expectErrorBody(await t.http('DELETE', `${PATH}/${model.uuid}`, { token: reader, headers: inTeam() }), 403, 'FORBIDDEN')
      expectHidden(await t.http('DELETE', `${PATH}/${model.uuid}`, { token: bob.token }), model)
      expectErrorBody(await t.http('DELETE', `${PATH}/${model.uuid}`), 401, 'UNAUTHORIZED')
      const bySlug = await t.http('DELETE', `${PATH}/qwen-2.5-7b`, { token: alice.token, headers: inTeam() })
      expectErrorBody(bySlug, 405, 'METHOD_NOT_SUPPORTED')
      expect(bySlug.headers.get('allow')).toBe('GET')
      expectInvalid(await t.http('DELETE', `${PATH}/0123-abcd`, { token: alice.token, headers: inTeam() }), 'model_uuid')
      expect((await row(model.uuid)).deleted_at).toBeNull()
      expect(await t.sql('select deleted_at from large_language_models where uuid = ?', [builtin.uuid])).toEqual([{ deleted_at: null }])
    })

    it("drops a deleted provider's models from the catalog", async () => {
      const provider = (await t.as(alice, inTeam()).providers.create({ name: 'Short-lived llm', type: 'llm', base_url: 'https://short.test/v1' })).data
      const model = await teamModel({ provider_uuid: provider.uuid })
      await t.as(alice, inTeam()).providers.delete({ provider_uuid: provider.uuid })
      expect((await t.http('GET', `${PATH}/${model.slug}`, { token: alice.token, headers: inTeam() })).status).toBe(404)
    })
  })

  it('documents the five operations in the OpenAPI document, one path template for a model (a uuid or slug to read, a uuid to change)', async () => {
    const spec = (await t.http('GET', '/openapi.json')).body
    expect(Object.keys(spec.paths[PATH]).sort()).toEqual(['get', 'post'])
    expect(Object.keys(spec.paths[`${PATH}/{model}`]).sort()).toEqual(['delete', 'get', 'put'])
    expect(spec.paths[`${PATH}/{model_uuid}`]).toBeUndefined()
    const pathParameter = (method: string) => spec.paths[`${PATH}/{model}`][method].parameters.find((p: { in: string }) => p.in === 'path')
    expect(pathParameter('get')).toMatchObject({ name: 'model', schema: { type: 'string' } })
    expect(pathParameter('get').schema.format).toBeUndefined()
    for (const method of ['put', 'delete']) expect(pathParameter(method)).toMatchObject({ name: 'model', schema: { format: 'uuid' } })
  })
})
