/**
 * `npm run keys:rotate`: re-seals every account secret, workflow webhook secret and outbound
 * webhook endpoint secret under the current APP_KEY.
 *
 * Rotation: put the new key in APP_KEY and the old one(s) in APP_PREVIOUS_KEYS, restart the
 * service (it reads both), run this command, then drop the old keys from APP_PREVIOUS_KEYS.
 * Prints counts and, for secrets no configured key opens, the account or workflow uuids (never a
 * secret).
 * Exits with 1 when any secret could not be re-sealed.
 */
import { loadConfig, loadDotEnv } from '../platform/config.ts'
import { openOrm, targetFromConfig } from '../platform/db.ts'
import { resealSecrets } from '../catalog/index.ts'
import { keyringOf } from '../platform/secrets.ts'
import { resealWebhookSecrets } from '../workflows/index.ts'
import { resealEndpointSecrets } from '../webhooks/index.ts'

loadDotEnv()
const config = loadConfig()
const orm = await openOrm(targetFromConfig(config))
try {
  const keyId = keyringOf(config).current.id
  for (const [kind, reseal] of [
    ['account', resealSecrets],
    ['workflow', resealWebhookSecrets],
    ['webhook endpoint', resealEndpointSecrets],
  ] as const) {
    const report = await reseal(orm.em.fork(), config)
    console.log(`re-sealed ${report.resealed} ${kind} secret(s) under key ${keyId}`)
    if (report.failed.length) {
      console.error(`${report.failed.length} ${kind} secret(s) could not be opened with any configured key (add the key that sealed them to APP_PREVIOUS_KEYS):`)
      for (const uuid of report.failed) console.error(`  ${kind} ${uuid}`)
      process.exitCode = 1
    }
  }
} finally {
  await orm.close()
}
