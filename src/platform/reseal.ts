/**
 * Re-sealing stored secrets under the current APP_KEY (`npm run keys:rotate`; docs/api/resources.md,
 * "accounts": key rotation possible), for any table that keeps a sealed secret as a ciphertext
 * column and a key id column (account secrets, workflow webhook secrets, outbound webhook endpoint
 * secrets).
 */
import type { Em } from './db.ts'
import { needsReseal, open, seal, type Keyring } from './secrets.ts'

/** Where a kind of secret is stored and the context it was sealed with (its row's uuid in it). */
export interface SealedColumn {
  table: 'accounts' | 'workflows' | 'webhook_endpoints'
  ciphertext: string
  keyId: string
  context: (uuid: string) => string
}

/** What a re-seal did. */
export interface ResealReport {
  resealed: number
  /** uuids of rows whose secret no configured key opens (left as they were). */
  failed: string[]
}

/**
 * Re-seals every secret of `column` not sealed under the keyring's current key, in batches of
 * `batchSize` rows, each row in its own short update guarded by its old key id (a row changed
 * meanwhile is left alone).
 */
export async function resealColumn(em: Em, keyring: Keyring, column: SealedColumn, batchSize = 200): Promise<ResealReport> {
  const report: ResealReport = { resealed: 0, failed: [] }
  const { table, ciphertext, keyId } = column
  let afterId = 0
  for (;;) {
    const rows = await em.execute(
      `select id::float8 as id, uuid, ${ciphertext} as ciphertext, ${keyId} as "keyId" from ${table}
       where ${keyId} is not null and ${keyId} <> ? and id > ? order by id limit ?`,
      [keyring.current.id, afterId, batchSize],
    )
    if (!rows.length) return report
    for (const row of rows) {
      afterId = Number(row.id)
      const sealed = { ciphertext: String(row.ciphertext), keyId: String(row.keyId) }
      if (!needsReseal(keyring, sealed)) continue
      let plaintext: string
      try {
        plaintext = open(keyring, sealed, column.context(String(row.uuid)))
      } catch {
        report.failed.push(String(row.uuid))
        continue
      }
      const next = seal(keyring, plaintext, column.context(String(row.uuid)))
      await em.execute(`update ${table} set ${ciphertext} = ?, ${keyId} = ? where id = ? and ${keyId} = ?`, [
        next.ciphertext,
        next.keyId,
        afterId,
        sealed.keyId,
      ])
      report.resealed += 1
    }
  }
}
