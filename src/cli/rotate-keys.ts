/**
 * `npm run keys:rotate`: re-seals every account secret, workflow webhook secret and outbound
 * webhook endpoint secret under the current APP_KEY, in one transaction that also records the
 * rotation in the audit log (`keys.rotate`, the system actor; counts and key ids, never a secret):
 * the secrets are re-sealed exactly when the event is recorded.
 *
 * Rotation: put the new key in APP_KEY and the old one(s) in APP_PREVIOUS_KEYS, restart the
 * service (it reads both), run this command, then drop the old keys from APP_PREVIOUS_KEYS.
 * Prints counts and, for secrets no configured key opens, the account or workflow uuids (never a
 * secret).
 * Exits with 1 when any secret could not be re-sealed.
 */
import { loadConfig, loadDotEnv } from '../platform/config.ts'
import { openOrm, targetFromConfig } from '../platform/db.ts'
import { recordAudit, SYSTEM_REQUEST, type Changes } from '../platform/audit.ts'
import { resealSecrets } from '../catalog/index.ts'
import type { ResealReport } from '../platform/reseal.ts'
import { keyringOf } from '../platform/secrets.ts'
import { resealWebhookSecrets } from '../workflows/index.ts'
import { resealEndpointSecrets } from '../webhooks/index.ts'

loadDotEnv()
const config = loadConfig()
const orm = await openOrm(targetFromConfig(config))
try {
  const keyId = keyringOf(config).current.id
  const kinds = [
    ['account', 'accounts', resealSecrets],
    ['workflow', 'workflows', resealWebhookSecrets],
    ['webhook endpoint', 'webhook_endpoints', resealEndpointSecrets],
  ] as const
  const reports = await orm.em.fork().transactional(async (em) => {
    const done: { kind: string; report: ResealReport }[] = []
    const changes: Changes = { key_id: { from: null, to: keyId } }
    for (const [kind, table, reseal] of kinds) {
      const report = await reseal(em, config)
      done.push({ kind, report })
      changes[`${table}_resealed`] = { from: null, to: report.resealed }
      changes[`${table}_failed`] = { from: null, to: report.failed.length }
    }
    await recordAudit(em, SYSTEM_REQUEST, { action: 'keys.rotate', workspaceId: null, resource: null, changes })
    return done
  })
  for (const { kind, report } of reports) {
    console.log(`re-sealed ${report.resealed} ${kind} secret(s) under key ${keyId}`)
    if (report.failed.length) {
      console.error(
        `${report.failed.length} ${kind} secret(s) could not be opened with any configured key (add the key that sealed them to APP_PREVIOUS_KEYS):`,
      )
      for (const uuid of report.failed) console.error(`  ${kind} ${uuid}`)
      process.exitCode = 1
    }
  }
} finally {
  await orm.close()
}
