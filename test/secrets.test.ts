/**
 * Sealing of account secrets (src/platform/secrets.ts; docs/api/resources.md, "Accounts"): AES-256-GCM
 * under APP_KEY with a key id per ciphertext, APP_PREVIOUS_KEYS for rotation, the masked hint,
 * and the server-only `revealAccountSecret` (src/platform/account-secrets.ts) and `resealSecrets` (src/catalog/accounts.service.ts).
 */
import { randomBytes } from 'node:crypto'
import { afterAll, beforeAll, describe, expect, it } from 'vitest'
import { ConfigError, loadConfig } from '../src/platform/config.ts'
import { resealSecrets } from '../src/catalog/accounts.service.ts'
import { revealAccountSecret as revealSecret } from '../src/platform/account-secrets.ts'
import { resealWebhookSecrets } from '../src/workflows/webhooks.service.ts'
import { resealEndpointSecrets } from '../src/webhooks/index.ts'
import { keyId, keyringOf, needsReseal, open, seal, SecretUnavailableError, secretHint } from '../src/platform/secrets.ts'
import { createTestApp, TEST_APP_KEY, type TestApp } from './helpers/app.ts'

const newKey = () => randomBytes(32)
const spelled = (key: Buffer) => `base64:${key.toString('base64')}`
const ring = (current: Buffer, previous: Buffer[] = []) => keyringOf({ appKey: current, previousAppKeys: previous })

describe('secrets (AES-256-GCM under APP_KEY)', () => {
  it('round-trips text, empty and multi-byte, with a fresh IV each time', () => {
    const keys = ring(newKey())
    for (const secret of ['sk-live-0123456789abcdef', '', 'pässwörd 🔑 ключ', 'x'.repeat(8192)]) {
      const sealed = seal(keys, secret, 'accounts:abc')
      expect(sealed.keyId).toBe(keys.current.id)
      expect(sealed.ciphertext).not.toContain(secret || '\u0001')
      expect(open(keys, sealed, 'accounts:abc')).toBe(secret)
    }
    const a = seal(keys, 'same secret')
    const b = seal(keys, 'same secret')
    expect(a.ciphertext).not.toBe(b.ciphertext)
    expect(Buffer.from(a.ciphertext, 'base64').subarray(0, 12).equals(Buffer.from(b.ciphertext, 'base64').subarray(0, 12))).toBe(false)
  })

  it('stores iv (12) + tag (16) + data as base64 and the key id as the first 16 hex of sha256(key)', () => {
    const key = Buffer.alloc(32, 7)
    const sealed = seal(ring(key), 'abcd')
    expect(Buffer.from(sealed.ciphertext, 'base64')).toHaveLength(12 + 16 + 4)
    expect(sealed.keyId).toMatch(/^[0-9a-f]{16}$/)
    expect(sealed.keyId).toBe(keyId(key))
    expect(keyId(key)).not.toBe(keyId(newKey()))
  })

  it('refuses a ciphertext whose key id no configured key has, without the secret in the message', () => {
    const sealed = seal(ring(newKey()), 'sk-top-secret-value')
    const error = (() => {
      try {
        open(ring(newKey()), sealed)
      } catch (caught) {
        return caught
      }
    })()
    expect(error).toBeInstanceOf(SecretUnavailableError)
    expect(String(error)).toContain(sealed.keyId)
    expect(String(error)).toMatch(/APP_PREVIOUS_KEYS/)
    expect(String(error)).not.toContain('sk-top-secret-value')
  })

  it('refuses a tampered ciphertext, a tampered tag, a wrong key under a right id, and another row context', () => {
    const key = newKey()
    const keys = ring(key)
    const sealed = seal(keys, 'sk-top-secret-value', 'accounts:one')
    const raw = Buffer.from(sealed.ciphertext, 'base64')
    const flip = (index: number) => {
      const copy = Buffer.from(raw)
      copy[index] ^= 1
      return { ...sealed, ciphertext: copy.toString('base64') }
    }
    for (const bad of [flip(raw.length - 1), flip(13), flip(0), { ...sealed, ciphertext: raw.subarray(0, 20).toString('base64') }]) {
      expect(() => open(keys, bad, 'accounts:one')).toThrow(SecretUnavailableError)
    }
    expect(() => open(keys, sealed, 'accounts:two')).toThrow(SecretUnavailableError)
    const impostor = { current: { id: keys.current.id, key: newKey() }, byId: new Map([[keys.current.id, newKey()]]) }
    expect(() => open(impostor, sealed, 'accounts:one')).toThrow(/failed authentication/)
    expect(open(keys, sealed, 'accounts:one')).toBe('sk-top-secret-value')
  })

  it('rotation: an old key in APP_PREVIOUS_KEYS still opens, and re-sealing moves to the new key id', () => {
    const oldKey = newKey()
    const sealed = seal(ring(oldKey), 'sk-rotate-me-please')
    const rotated = ring(newKey(), [oldKey])
    expect(needsReseal(rotated, sealed)).toBe(true)
    const plaintext = open(rotated, sealed)
    expect(plaintext).toBe('sk-rotate-me-please')
    const resealed = seal(rotated, plaintext)
    expect(resealed.keyId).toBe(rotated.current.id)
    expect(needsReseal(rotated, resealed)).toBe(false)
    expect(() => open(ring(oldKey), resealed)).toThrow(SecretUnavailableError)
  })

  it('masks: first 3 and last 4 characters from 12 characters on, else ****', () => {
    expect(secretHint('sk-1234567890abcd')).toBe('sk-...abcd')
    expect(secretHint('123456789012')).toBe('123...9012')
    expect(secretHint('12345678901')).toBe('****')
    expect(secretHint('')).toBe('****')
    // Counted in code points, so an emoji is never cut in half.
    expect(secretHint('🔑🔑🔑456789abc🔒')).toBe('🔑🔑🔑...abc🔒')
    expect(secretHint('🔑🔑🔑4567890')).toBe('****')
  })
})

describe('APP_PREVIOUS_KEYS (src/platform/config.ts)', () => {
  const base = { APP_KEY: TEST_APP_KEY, DATA_DIR: '/tmp/aw-config-test' }

  it('reads comma-separated keys (spaces and empty parts ignored) and defaults to none', () => {
    const a = newKey()
    const b = newKey()
    expect(loadConfig(base).previousAppKeys).toEqual([])
    const config = loadConfig({ ...base, APP_PREVIOUS_KEYS: ` ${spelled(a)} ,, ${spelled(b)}` })
    expect(config.previousAppKeys.map((key) => key.toString('hex'))).toEqual([a.toString('hex'), b.toString('hex')])
  })

  it('refuses a malformed key, naming the variable and not echoing the value', () => {
    const value = `${spelled(newKey())},base64:tooshort`
    expect(() => loadConfig({ ...base, APP_PREVIOUS_KEYS: value })).toThrow(ConfigError)
    expect(() => loadConfig({ ...base, APP_PREVIOUS_KEYS: value })).toThrow(/^APP_PREVIOUS_KEYS: /)
    try {
      loadConfig({ ...base, APP_PREVIOUS_KEYS: value })
    } catch (error) {
      expect(String(error)).not.toContain('tooshort')
    }
  })
})

describe('revealSecret and resealSecrets (npm run keys:rotate)', () => {
  let t: TestApp
  beforeAll(async () => {
    t = await createTestApp()
  })
  afterAll(async () => t?.close())

  const idOf = async (uuid: string) => Number((await t.sql('select id::float8 as id from accounts where uuid = ?', [uuid]))[0].id)

  it('reveals a stored secret, null without one, and re-seals under a rotated key', async () => {
    const user = await t.make.user()
    const providers = await t.as(user).providers.list({ search: 'openai-compatible' })
    const provider = providers.data[0]
    const withSecret = await t
      .as(user)
      .accounts.create({ name: 'Rotating', provider_uuid: provider.uuid, secret: 'sk-rotation-secret-0001' })
    const without = await t.as(user).accounts.create({ name: 'No secret', provider_uuid: provider.uuid })
    const id = await idOf(withSecret.data.uuid)

    const em = t.runtime.orm.em.fork()
    expect(await revealSecret(em, id, t.config)).toBe('sk-rotation-secret-0001')
    expect(await revealSecret(em, await idOf(without.data.uuid), t.config)).toBeNull()
    expect(await revealSecret(em, 999_999_999, t.config)).toBeNull()

    const oldKeyId = keyId(t.config.appKey)
    const [stored] = await t.sql('select secret_key_id, secret_ciphertext from accounts where id = ?', [id])
    expect(stored.secret_key_id).toBe(oldKeyId)
    expect(String(stored.secret_ciphertext)).not.toContain('sk-rotation-secret-0001')

    // A process with only a new key cannot open it, and says which key id it lacks.
    const fresh = newKey()
    await expect(revealSecret(em, id, { appKey: fresh, previousAppKeys: [] })).rejects.toThrow(oldKeyId)

    // Rotated: the new key seals, the old one is still read; re-sealing moves every secret.
    const rotated = { appKey: fresh, previousAppKeys: [t.config.appKey] }
    expect(await revealSecret(em, id, rotated)).toBe('sk-rotation-secret-0001')
    const report = await resealSecrets(em, rotated)
    expect(report).toEqual({ resealed: 1, failed: [] })
    const [after] = await t.sql('select secret_key_id from accounts where id = ?', [id])
    expect(after.secret_key_id).toBe(keyId(fresh))
    expect(await revealSecret(em, id, { appKey: fresh, previousAppKeys: [] })).toBe('sk-rotation-secret-0001')
    expect(await resealSecrets(em, rotated)).toEqual({ resealed: 0, failed: [] })

    // A secret no configured key opens is reported by uuid and left as it was.
    const stranger = { appKey: newKey(), previousAppKeys: [] }
    const stuck = await resealSecrets(em, stranger)
    expect(stuck.resealed).toBe(0)
    expect(stuck.failed).toContain(withSecret.data.uuid)
    const [unchanged] = await t.sql('select secret_key_id from accounts where id = ?', [id])
    expect(unchanged.secret_key_id).toBe(keyId(fresh))
  })

  it('re-seals workflow webhook secrets under a rotated key', async () => {
    const user = await t.make.user()
    const created = await t.http('POST', '/api/v1/workflows', {
      token: user.token,
      body: {
        name: 'Signed hook',
        is_active: true,
        webhook_secret: 'a-webhook-secret-to-rotate',
        nodes: [
          { id: 'hook', type: 'webhook_trigger' },
          { id: 'reply', type: 'respond_to_webhook', parameters: { body: { ok: true } } },
        ],
        edges: [{ source: 'hook', target: 'reply' }],
      },
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const fresh = newKey()
    const rotated = { appKey: fresh, previousAppKeys: [t.config.appKey] }
    const em = t.runtime.orm.em.fork()
    expect(await resealWebhookSecrets(em, rotated)).toEqual({ resealed: 1, failed: [] })
    const [row] = await t.sql('select webhook_secret_key_id, webhook_secret_ciphertext from workflows where uuid = ?', [
      created.body.data.uuid,
    ])
    expect(row.webhook_secret_key_id).toBe(keyId(fresh))
    expect(String(row.webhook_secret_ciphertext)).not.toContain('a-webhook-secret-to-rotate')
    expect(await resealWebhookSecrets(em, rotated)).toEqual({ resealed: 0, failed: [] })
  })

  it('re-seals outbound webhook endpoint secrets (and the one before a rotation) under a rotated key', async () => {
    const user = await t.make.user()
    const created = await t.http('POST', '/api/v1/webhook-endpoints', {
      token: user.token,
      body: { url: 'https://hooks.example.com/in', event_types: ['*'] },
    })
    expect(created.status, JSON.stringify(created.body)).toBe(201)
    const rotatedSecret = await t.http('POST', `/api/v1/webhook-endpoints/${created.body.data.uuid}/rotate-secret`, { token: user.token })
    const fresh = newKey()
    const rotated = { appKey: fresh, previousAppKeys: [t.config.appKey] }
    const em = t.runtime.orm.em.fork()
    expect(await resealEndpointSecrets(em, rotated)).toEqual({ resealed: 2, failed: [] })
    const [row] = await t.sql('select secret_key_id, previous_secret_key_id from webhook_endpoints where uuid = ?', [
      created.body.data.uuid,
    ])
    expect(row).toEqual({ secret_key_id: keyId(fresh), previous_secret_key_id: keyId(fresh) })
    expect(await resealEndpointSecrets(em, rotated)).toEqual({ resealed: 0, failed: [] })
    // The re-sealed secrets open, under the new key alone, to the secrets the API showed.
    const [sealed] = await t.sql(
      'select secret_ciphertext as c, secret_key_id as k, previous_secret_ciphertext as pc, previous_secret_key_id as pk from webhook_endpoints where uuid = ?',
      [created.body.data.uuid],
    )
    const onlyFresh = keyringOf({ appKey: fresh, previousAppKeys: [] })
    const context = `webhook_endpoints:${created.body.data.uuid}`
    expect(open(onlyFresh, { ciphertext: String(sealed.c), keyId: String(sealed.k) }, context)).toBe(rotatedSecret.body.data.secret)
    expect(open(onlyFresh, { ciphertext: String(sealed.pc), keyId: String(sealed.pk) }, context)).toBe(created.body.data.secret)
  })

  it('a ciphertext copied onto another account does not open there', async () => {
    const user = await t.make.user()
    const provider = (await t.as(user).providers.list({ search: 'ollama' })).data[0]
    const a = await t.as(user).accounts.create({ name: 'A', provider_uuid: provider.uuid, secret: 'sk-account-a-secret' })
    const b = await t.as(user).accounts.create({ name: 'B', provider_uuid: provider.uuid, secret: 'sk-account-b-secret' })
    await t.sql(`update accounts set secret_ciphertext = (select secret_ciphertext from accounts where uuid = ?) where uuid = ?`, [
      a.data.uuid,
      b.data.uuid,
    ])
    await expect(revealSecret(t.runtime.orm.em.fork(), await idOf(b.data.uuid), t.config)).rejects.toThrow(SecretUnavailableError)
  })
})
