/**
 * Sealing of stored secrets (account credentials; docs/api/resources.md, "Accounts"): AES-256-GCM
 * under APP_KEY, each ciphertext stored with the id of the key that sealed it, so keys can be
 * rotated (APP_PREVIOUS_KEYS keeps old keys readable until `npm run keys:rotate` re-seals).
 *
 * Stored form: base64 of `iv (12 bytes) || tag (16 bytes) || ciphertext` in one text column, and
 * the key id (first 16 hex characters of sha256 of the key) beside it. Nothing here logs, and no
 * error message carries a secret or a key.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'
import type { Config } from './config.ts'

const IV_BYTES = 12
const TAG_BYTES = 16

/** The keys a process can seal with (`current`) and open with (every one, by id). */
export interface Keyring {
  current: { id: string; key: Buffer }
  byId: ReadonlyMap<string, Buffer>
}

/** A sealed secret as stored: `secret_ciphertext` and `secret_key_id`. */
export interface Sealed {
  ciphertext: string
  keyId: string
}

/** A stored secret cannot be opened: no configured key has its id, or it fails authentication. */
export class SecretUnavailableError extends Error {
  override name = 'SecretUnavailableError'
}

/** The id stored with each ciphertext: the first 16 hex characters of sha256(key). */
export function keyId(key: Buffer): string {
  return createHash('sha256').update(key).digest('hex').slice(0, 16)
}

const keyrings = new WeakMap<object, Keyring>()

/**
 * The keyring of a configuration: APP_KEY seals, APP_KEY and APP_PREVIOUS_KEYS open.
 * Memoised per configuration object.
 */
export function keyringOf(config: Pick<Config, 'appKey' | 'previousAppKeys'>): Keyring {
  const known = keyrings.get(config)
  if (known) return known
  const current = { id: keyId(config.appKey), key: config.appKey }
  const byId = new Map<string, Buffer>()
  for (const key of config.previousAppKeys) byId.set(keyId(key), key)
  byId.set(current.id, current.key)
  const keyring: Keyring = { current, byId }
  keyrings.set(config, keyring)
  return keyring
}

/**
 * Encrypts `plaintext` under the current key with a random 12-byte IV.
 * @param context additional authenticated data binding the ciphertext to its row (e.g.
 *   `accounts:<uuid>`), so a ciphertext copied to another row does not open there.
 */
export function seal(keyring: Keyring, plaintext: string, context = ''): Sealed {
  const iv = randomBytes(IV_BYTES)
  const cipher = createCipheriv('aes-256-gcm', keyring.current.key, iv)
  cipher.setAAD(Buffer.from(context, 'utf8'))
  const data = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
  return { ciphertext: Buffer.concat([iv, cipher.getAuthTag(), data]).toString('base64'), keyId: keyring.current.id }
}

/**
 * Decrypts a sealed secret with the key its id names.
 * @throws SecretUnavailableError when no configured key has that id, or the ciphertext (or its
 *   context) was altered; the message never holds the secret.
 */
export function open(keyring: Keyring, sealed: Sealed, context = ''): string {
  const key = keyring.byId.get(sealed.keyId)
  if (!key) {
    throw new SecretUnavailableError(
      `No configured key has id ${sealed.keyId}: set the key that sealed this secret in APP_KEY or APP_PREVIOUS_KEYS`,
    )
  }
  const raw = Buffer.from(sealed.ciphertext, 'base64')
  if (raw.length < IV_BYTES + TAG_BYTES) throw new SecretUnavailableError('The stored secret is malformed')
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, raw.subarray(0, IV_BYTES))
    decipher.setAAD(Buffer.from(context, 'utf8'))
    decipher.setAuthTag(raw.subarray(IV_BYTES, IV_BYTES + TAG_BYTES))
    return Buffer.concat([decipher.update(raw.subarray(IV_BYTES + TAG_BYTES)), decipher.final()]).toString('utf8')
  } catch {
    throw new SecretUnavailableError('The stored secret failed authentication (altered, or sealed for another row)')
  }
}

/** Whether a sealed secret should be re-sealed under the current key. */
export function needsReseal(keyring: Keyring, sealed: Sealed): boolean {
  return sealed.keyId !== keyring.current.id
}

/**
 * The masked form shown in responses (`secret_hint`): the first 3 and last 4 characters around
 * `...` when the secret has at least 12 characters (`sk-...abcd`), else `****`.
 */
export function secretHint(secret: string): string {
  const chars = Array.from(secret)
  return chars.length >= 12 ? `${chars.slice(0, 3).join('')}...${chars.slice(-4).join('')}` : '****'
}
