/**
 * Account secrets at rest: sealed with AES-256-GCM under APP_KEY (src/platform/secrets.ts), bound
 * to the account's uuid so a ciphertext copied to another row does not open there
 * (docs/api/resources.md, "Accounts").
 */
import type { Config } from './config.ts'
import type { Em } from './db.ts'
import { keyringOf, open } from './secrets.ts'

/** The additional data an account's secret is sealed with. */
export const accountSealContext = (uuid: string): string => `accounts:${uuid}`

/**
 * SERVER-ONLY: the plaintext secret of an account, for the code that calls its provider (runs).
 * Never put it in a response, a log line or an error. Makes no access check: the caller must
 * have resolved `accountId` through the access rules first.
 * @returns the secret, or null when the account has none (or does not exist).
 * @throws SecretUnavailableError (src/platform/secrets.ts) when no configured key opens it.
 */
export async function revealAccountSecret(em: Em, accountId: number, config: Pick<Config, 'appKey' | 'previousAppKeys'>): Promise<string | null> {
  const [row] = await em.execute(
    `select uuid, secret_ciphertext as ciphertext, secret_key_id as "keyId" from accounts where id = ?`,
    [accountId],
  )
  if (!row || row.ciphertext === null || row.keyId === null) return null
  return open(keyringOf(config), { ciphertext: String(row.ciphertext), keyId: String(row.keyId) }, accountSealContext(String(row.uuid)))
}

