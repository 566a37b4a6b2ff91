/**
 * `PUT /api/v1/prompts/{prompt_uuid}` (specification: "Update a Prompt"; docs/api/resources.md):
 * exactly the specified body fields, omitted fields kept, `null` clearing, `metadata` merged
 * key by key with `metadata.input` replaced whole, the permission rules of docs/api/tenancy.md, and
 * a failed update changing nothing.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { createTestApp, type TestApp, type TestUser } from './helpers/app.ts'
import { readOnlyToken } from './helpers/agents.ts'
import { expectInvalid, ISO_Z, issuePaths, trpcError } from './helpers/expect.ts'
import { expectHidden, insertMedia, makePrompt, PROMPT_KEYS, sharePrompt, storedPrompt, TWO_INPUTS } from './helpers/prompts.ts'

describe('prompts.update (PUT /api/v1/prompts/{prompt_uuid})', () => {
  let t: TestApp
  let alice: TestUser
  let bob: TestUser
  let carol: TestUser
  let dave: TestUser
  let team: { uuid: string }
  const put = (uuid: string, user: { token: string }, body: unknown, headers: Record<string, string> = {}) =>
    t.http('PUT', `/api/v1/prompts/${uuid}`, { token: user.token, body, headers })

  beforeAll(async () => {
    t = await createTestApp()
    alice = await t.make.user({ name: 'Alice Liddell' })
    bob = await t.make.user({ name: 'Bob Builder' })
    carol = await t.make.user({ name: 'Carol Member' })
    dave = await t.make.user({ name: 'Dave Admin' })
    team = await t.make.workspace(alice, { name: 'Update Team' })
    await t.make.member(team, alice, carol, 'member')
    await t.make.member(team, alice, dave, 'admin')
  })
  afterAll(async () => t?.close())

  /** A prompt of alice's with every field set. */
  const fullPrompt = async (workspaceUuid?: string) => {
    const photo = await insertMedia(t, alice)
    return makePrompt(
      t,
      alice,
      {
        name: 'Original',
        description: 'Original description',
        content: 'Write about {{topic}} in a {{tone}} tone.',
        visibility: 'workspace',
        profile_photo_key: photo,
        profile_photo_config: { emoji: '📝', background_color: '#fff', preference: 'emoji' },
        metadata: { input: TWO_INPUTS, audience: 'developers', locale: 'en' },
      },
      workspaceUuid,
    )
  }

  it('answers 200 with the Prompt shape after a body of every specified field', async () => {
    const prompt = await fullPrompt()
    const photo = await insertMedia(t, alice)
    const body = {
      name: 'Release notes writer',
      description: 'Turns a changelog into release notes',
      visibility: 'public',
      profile_photo_key: photo,
      profile_photo_config: { emoji: '🚀', background_color: '#000000', preference: 'image' },
      content: 'Summarise {{changelog}} for {{audience}}.',
      metadata: {
        input: [
          { key: 'changelog', label: 'Changelog', type: 'textarea', required: true },
          { key: 'audience', label: 'Audience', type: 'multiselect', required: false, options: ['users', 'admins'] },
        ],
        locale: 'de',
      },
      with: 'user,workspace',
    }
    await new Promise((resolve) => setTimeout(resolve, 5))
    const res = await put(prompt.uuid, alice, body)
    expect(res.status, JSON.stringify(res.body)).toBe(200)
    expect(Object.keys(res.body)).toEqual(['data'])
    const updated = res.body.data
    expect(Object.keys(updated).sort()).toEqual(PROMPT_KEYS)
    expect(updated).toMatchObject({
      uuid: prompt.uuid,
      name: 'Release notes writer',
      description: 'Turns a changelog into release notes',
      visibility: 'public',
      profile_photo_url: `${t.config.appUrl}/api/v1/media/${photo}`,
      profile_photo_config: { emoji: '🚀', background_color: '#000000', preference: 'image' },
      content: 'Summarise {{changelog}} for {{audience}}.',
      is_owner: true,
      created_at: prompt.created_at,
      user: { id: alice.id, primary_workspace: null },
      workspace: { uuid: alice.workspaceUuid, user: null },
    })
    expect(updated.metadata).toEqual({
      input: [
        { key: 'changelog', label: 'Changelog', type: 'textarea', required: true },
        { key: 'audience', label: 'Audience', type: 'multiselect', required: false, options: ['users', 'admins'] },
      ],
      audience: 'developers',
      locale: 'de',
    })
    expect(updated.updated_at).toMatch(ISO_Z)
    expect(updated.updated_at > prompt.updated_at).toBe(true)
    expect((await t.http('GET', `/api/v1/prompts/${prompt.uuid}`, { token: alice.token })).body.data).toEqual(updated)
  })

  it('keeps every omitted field', async () => {
    const prompt = await fullPrompt()
    const res = await put(prompt.uuid, alice, { name: 'Renamed only' })
    expect(res.status).toBe(200)
    expect(res.body.data).toEqual({ ...prompt, name: 'Renamed only', updated_at: res.body.data.updated_at })
    const empty = await put(prompt.uuid, alice, {})
    expect(empty.status).toBe(200)
    expect(empty.body.data.name).toBe('Renamed only')
  })

  it('clears description (to ""), profile_photo_key and profile_photo_config with null', async () => {
    const prompt = await fullPrompt()
    const res = await put(prompt.uuid, alice, { description: null, profile_photo_key: null, profile_photo_config: null })
    expect(res.status).toBe(200)
    expect(res.body.data).toMatchObject({ description: '', profile_photo_url: null, profile_photo_config: null, name: 'Original' })
    expect(await storedPrompt(t, prompt.uuid)).toMatchObject({ description: '', profile_photo_key: null, profile_photo_config: null })
  })

  it('replaces profile_photo_config whole when sent', async () => {
    const prompt = await fullPrompt()
    const res = await put(prompt.uuid, alice, { profile_photo_config: { emoji: '🙂' } })
    expect(res.body.data.profile_photo_config).toEqual({ emoji: '🙂' })
  })

  it.each([
    ['name', { name: null }],
    ['content', { content: null }],
    ['visibility', { visibility: null }],
  ])('answers 400 naming %s when it is sent as null', async (field, body) => {
    const prompt = await fullPrompt()
    expectInvalid(await put(prompt.uuid, alice, body), field)
  })

  describe('metadata', () => {
    it('merges key by key: a sent key is set, null removes a key, omitted keys and inputs are kept', async () => {
      const prompt = await fullPrompt()
      const res = await put(prompt.uuid, alice, { metadata: { locale: 'fr', audience: null, tag: 'news' } })
      expect(res.status).toBe(200)
      expect(res.body.data.metadata).toEqual({ input: TWO_INPUTS, locale: 'fr', tag: 'news' })
    })

    it('keeps every key of concurrent updates of different metadata keys (the row is locked)', async () => {
      const prompt = await fullPrompt()
      const keys = Array.from({ length: 8 }, (_, i) => `k${i}`)
      const answers = await Promise.all(keys.map((key) => put(prompt.uuid, alice, { metadata: { [key]: key } })))
      expect(answers.map((res) => res.status)).toEqual(keys.map(() => 200))
      const stored = (await put(prompt.uuid, alice, {})).body.data.metadata
      expect(stored).toEqual({ input: TWO_INPUTS, audience: 'developers', locale: 'en', ...Object.fromEntries(keys.map((key) => [key, key])) })
    })

    it('replaces the whole input list when metadata.input is sent; null or [] empties it', async () => {
      const prompt = await fullPrompt()
      const one = [{ key: 'only', label: 'Only', type: 'date', required: true }]
      const replaced = await put(prompt.uuid, alice, { metadata: { input: one } })
      expect(replaced.body.data.metadata).toEqual({ input: one, audience: 'developers', locale: 'en' })
      const cleared = await put(prompt.uuid, alice, { metadata: { input: null } })
      expect(cleared.body.data.metadata).toEqual({ input: [], audience: 'developers', locale: 'en' })
      await put(prompt.uuid, alice, { metadata: { input: one } })
      expect((await put(prompt.uuid, alice, { metadata: { input: [] } })).body.data.metadata.input).toEqual([])
    })

    it('answers 400 naming metadata when the merge would pass 64 KiB, and changes nothing', async () => {
      const prompt = await makePrompt(t, alice, {
        metadata: Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`note${i}`, 'x'.repeat(10_000)])),
      })
      const before = await storedPrompt(t, prompt.uuid)
      const res = await put(prompt.uuid, alice, { name: 'Too big', metadata: { more: 'y'.repeat(6_000) } })
      expectInvalid(res, 'metadata')
      expect(await storedPrompt(t, prompt.uuid)).toEqual(before)
    })
  })

  const input = (extra: Record<string, unknown>) => ({ key: 'k', label: 'K', type: 'text', ...extra })
  it.each([
    ['a blank name', { name: ' ' }, 'name'],
    ['a name over 255 characters', { name: 'n'.repeat(256) }, 'name'],
    ['an empty content', { content: '' }, 'content'],
    ['a content over 100,000 characters', { content: 'c'.repeat(100_001) }, 'content'],
    ['a description over 2,000 characters', { description: 'd'.repeat(2001) }, 'description'],
    ['a description that is not a string', { description: 5 }, 'description'],
    ['an unknown visibility', { visibility: 'everyone' }, 'visibility'],
    ['a profile_photo_key that is no upload', { profile_photo_key: 'ghost.png' }, 'profile_photo_key'],
    ['a profile_photo_key that is not a string', { profile_photo_key: 3 }, 'profile_photo_key'],
    ['a profile_photo_config that is not an object', { profile_photo_config: 'emoji' }, 'profile_photo_config'],
    ['an unknown preference', { profile_photo_config: { preference: 'gif' } }, 'profile_photo_config.preference'],
    ['a bad input key', { metadata: { input: [input({ key: 'has-dash' })] } }, 'metadata.input.0.key'],
    ['a duplicate input key', { metadata: { input: [input({}), input({ label: 'Dup' })] } }, 'metadata.input.1.key'],
    ['an unknown input type', { metadata: { input: [input({ type: 'file' })] } }, 'metadata.input.0.type'],
    ['required as a string', { metadata: { input: [input({ required: 'false' })] } }, 'metadata.input.0.required'],
    ['required as a number', { metadata: { input: [input({ required: 1 })] } }, 'metadata.input.0.required'],
    ['options on a boolean input', { metadata: { input: [input({ type: 'boolean', options: ['y'] })] } }, 'metadata.input.0.options'],
    ['a select input without options', { metadata: { input: [input({ type: 'select' })] } }, 'metadata.input.0.options'],
    ['options that are not strings', { metadata: { input: [input({ type: 'select', options: [1] })] } }, 'metadata.input.0.options.0'],
    ['an empty label', { metadata: { input: [input({ label: '' })] } }, 'metadata.input.0.label'],
    ['an extra metadata key with an object value', { metadata: { extra: { a: 1 } } }, 'metadata.extra'],
    ['an extra metadata key with a bad name', { metadata: { 'no spaces': 'x' } }, 'metadata.no spaces'],
    ['an unknown relation in with', { with: 'shares' }, 'with.0'],
    ['a with that is not a string', { with: ['user'] }, 'with'],
  ])('answers 400 naming the field for %s, changing nothing', async (_label, body, path) => {
    const prompt = await fullPrompt()
    const before = await storedPrompt(t, prompt.uuid)
    expectInvalid(await put(prompt.uuid, alice, { name: 'Should not stick', ...body }), path)
    expect(await storedPrompt(t, prompt.uuid)).toEqual(before)
  })

  it.each([['instruction'], ['tools'], ['user_id'], ['uuid'], ['file']])('answers 400 for the unspecified field %s', async (field) => {
    const prompt = await fullPrompt()
    const res = await put(prompt.uuid, alice, { [field]: 'x' })
    expect(res.status).toBe(400)
    expect(res.body.issues).toEqual([expect.objectContaining({ code: 'unrecognized_keys', keys: [field], path: [] })])
  })

  it('answers 400 naming prompt_uuid for a malformed uuid and 401 without a token', async () => {
    expectInvalid(await put('0123-abcd', alice, { name: 'x' }), 'prompt_uuid')
    const prompt = await fullPrompt()
    expect((await t.http('PUT', `/api/v1/prompts/${prompt.uuid}`, { body: { name: 'x' } })).status).toBe(401)
  })

  it('updates through the tRPC caller with the same rules', async () => {
    const prompt = await fullPrompt()
    const updated = await t.as(alice).prompts.update({ prompt_uuid: prompt.uuid, content: 'New {{topic}}', metadata: { locale: null } })
    expect(updated.data).toMatchObject({ content: 'New {{topic}}', metadata: { input: TWO_INPUTS, audience: 'developers' } })
    expect(updated.data.metadata).not.toHaveProperty('locale')
    const error = await trpcError(
      t.as(alice).prompts.update({ prompt_uuid: prompt.uuid, metadata: { input: [{ key: 'a', label: 'A', type: 'select' }] } }),
    )
    expect(issuePaths(error)).toEqual([['metadata', 'input', 0, 'options']])
  })

  describe('who may update', () => {
    it("answers 404 for another tenant's prompt, saying nothing of it, and leaves it unchanged", async () => {
      const prompt = await fullPrompt()
      const before = await storedPrompt(t, prompt.uuid)
      expectHidden(await put(prompt.uuid, bob, { name: 'Hijacked' }), { uuid: prompt.uuid, name: 'Original' })
      expect(await storedPrompt(t, prompt.uuid)).toEqual(before)
    })

    it('answers 403 for a read-only token, changing nothing', async () => {
      const prompt = await fullPrompt()
      const before = await storedPrompt(t, prompt.uuid)
      const token = (await readOnlyToken(t, alice)).token
      const res = await put(prompt.uuid, { token }, { name: 'Read only' })
      expect(res.status).toBe(403)
      expect(res.body.code).toBe('FORBIDDEN')
      expect(await storedPrompt(t, prompt.uuid)).toEqual(before)
    })

    it('answers 403 to a read share and to a reader of a public prompt; a write share may update', async () => {
      const prompt = await fullPrompt()
      const before = await storedPrompt(t, prompt.uuid)
      await sharePrompt(t, prompt.uuid, { user: bob.id }, 'read')
      const res = await put(prompt.uuid, bob, { name: 'Read share' })
      expect(res.status).toBe(403)
      expect(res.body.code).toBe('FORBIDDEN')
      expect(await storedPrompt(t, prompt.uuid)).toEqual(before)

      const pub = await makePrompt(t, alice, { visibility: 'public' })
      expect((await put(pub.uuid, bob, { name: 'Public reader' })).status).toBe(403)

      const writable = await fullPrompt()
      await sharePrompt(t, writable.uuid, { workspace: bob.workspaceUuid }, 'write')
      const ok = await put(writable.uuid, bob, { name: 'Write share' })
      expect(ok.status).toBe(200)
      expect(ok.body.data).toMatchObject({ name: 'Write share', is_owner: false, user: { id: alice.id } })
    })

    it('answers 403 to a workspace member on a workspace prompt; the workspace owner and admins may update', async () => {
      const prompt = await fullPrompt(team.uuid)
      const before = await storedPrompt(t, prompt.uuid)
      const inTeam = { 'x-workspace-uuid': team.uuid }
      const res = await put(prompt.uuid, carol, { name: 'By member' }, inTeam)
      expect(res.status).toBe(403)
      expect(await storedPrompt(t, prompt.uuid)).toEqual(before)
      // The workspace context may also come from the body's workspace_uuid.
      expect((await put(prompt.uuid, carol, { name: 'By member', workspace_uuid: team.uuid })).status).toBe(403)

      const byAdmin = await put(prompt.uuid, dave, { name: 'By admin', workspace_uuid: team.uuid })
      expect(byAdmin.status).toBe(200)
      expect(byAdmin.body.data).toMatchObject({ name: 'By admin', is_owner: false, workspace: { uuid: team.uuid } })
      const bob2 = await t.make.user()
      await t.make.member(team, alice, bob2, 'owner')
      expect((await put(prompt.uuid, bob2, { name: 'By co-owner' }, inTeam)).body.data.name).toBe('By co-owner')
      // Outside the team's workspace context dave is no admin of it, and the prompt is not visible.
      expect((await put(prompt.uuid, dave, { name: 'No context' })).status).toBe(404)
    })

    it("refuses a profile_photo_key of another tenant's upload with a 400, changing nothing", async () => {
      const prompt = await fullPrompt()
      const before = await storedPrompt(t, prompt.uuid)
      const bobs = await insertMedia(t, bob)
      expectInvalid(await put(prompt.uuid, alice, { name: 'Stolen photo', profile_photo_key: bobs }), 'profile_photo_key')
      expect(await storedPrompt(t, prompt.uuid)).toEqual(before)
    })
  })
})
