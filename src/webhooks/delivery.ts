/**
 * One attempt of a delivery (docs/api/webhooks.md, "Signatures" and "Delivery"): the payload
 * signed per the Standard Webhooks specification by the `standardwebhooks` library (`v1,<base64
 * HMAC-SHA256 of "<id>.<timestamp>.<body>">`, one per secret, space-separated), posted through the
 * outbound guard of tools with the attempt timeout, a cap on the answer's size and no redirects.
 * An attempt never throws: whatever happens is its record.
 */
import { randomBytes } from 'node:crypto'
import { Webhook } from 'standardwebhooks'
import type { WebhookAttempt } from '../../entities/index.ts'
import type { Config } from '../platform/config.ts'
import { keyringOf, open, seal, type Sealed } from '../platform/secrets.ts'
import { resealColumn, type ResealReport } from '../platform/reseal.ts'
import type { Em } from '../platform/db.ts'
import { sendToolRequest, ToolHttpError } from '../catalog/index.ts'

/** Largest answer read from an endpoint, in bytes; a larger one fails the attempt. */
export const MAX_RESPONSE_BYTES = 1024 * 1024
/** Bytes of the answer kept with the attempt. */
const KEPT_BYTES = 1024
/** Random bytes of a new secret (the contract allows 24..64). */
const SECRET_BYTES = 32

/** The sealing context of endpoint `uuid`'s secrets: a ciphertext moved to another row does not open. */
export const secretContext = (uuid: string) => `webhook_endpoints:${uuid}`

/** A new signing secret: `whsec_` and the base64 of {@link SECRET_BYTES} random bytes. */
export const newSecret = (): string => `whsec_${randomBytes(SECRET_BYTES).toString('base64')}`

/** Seals `secret` for endpoint `uuid` with the service key. */
export const sealSecret = (config: Pick<Config, 'appKey' | 'previousAppKeys'>, uuid: string, secret: string): Sealed =>
  seal(keyringOf(config), secret, secretContext(uuid))

/**
 * Re-seals every endpoint's secret, and the one before a rotation while it is kept, under the
 * current APP_KEY (`npm run keys:rotate`). Answers the counts of both columns together.
 */
export async function resealEndpointSecrets(
  em: Em,
  config: Pick<Config, 'appKey' | 'previousAppKeys'>,
  batchSize = 200,
): Promise<ResealReport> {
  const keyring = keyringOf(config)
  const current = await resealColumn(
    em,
    keyring,
    { table: 'webhook_endpoints', ciphertext: 'secret_ciphertext', keyId: 'secret_key_id', context: secretContext },
    batchSize,
  )
  const previous = await resealColumn(
    em,
    keyring,
    { table: 'webhook_endpoints', ciphertext: 'previous_secret_ciphertext', keyId: 'previous_secret_key_id', context: secretContext },
    batchSize,
  )
  return { resealed: current.resealed + previous.resealed, failed: [...new Set([...current.failed, ...previous.failed])] }
}

/** What an attempt reads of its endpoint. */
export interface EndpointSecrets {
  endpointUuid: string
  url: string
  secretCiphertext: string
  secretKeyId: string
  /** The secret before the last rotation, while it still signs. */
  previousCiphertext: string | null
  previousKeyId: string | null
}

/** An attempt's outcome: a 2xx or not, and its record. */
export interface AttemptOutcome {
  ok: boolean
  record: WebhookAttempt
}

/** The `webhook-signature` header of `payload` for each of `secrets`. */
export function signatures(secrets: readonly string[], eventId: string, at: Date, payload: string): string {
  return secrets.map((secret) => new Webhook(secret).sign(eventId, at, payload)).join(' ')
}

/** Why a request failed, in words about the endpoint (the tools' messages name the tools' settings). */
function failure(error: unknown, config: Config, url: URL): string {
  if (!(error instanceof ToolHttpError)) return `The attempt failed: ${error instanceof Error ? error.name : 'unknown error'}`
  if (error.reason === 'timeout') return `${url.host} did not answer within WEBHOOK_TIMEOUT_MS (${config.webhooks.timeoutMs} ms)`
  if (error.reason === 'too_large') return `The answer of ${url.host} is larger than ${MAX_RESPONSE_BYTES} bytes`
  if (error.reason === 'refused')
    return `Refused: ${url.host} is (or resolves to) a private, loopback or link-local address, and WEBHOOK_ALLOW_PRIVATE_NETWORK is off`
  return error.message
}

/** Posts `payload` (the exact bytes signed) to the endpoint once. Never throws. */
export async function attempt(config: Config, endpoint: EndpointSecrets, eventId: string, payload: string): Promise<AttemptOutcome> {
  const started = Date.now()
  const at = new Date(Math.floor(started / 1000) * 1000)
  const record = (fields: Pick<WebhookAttempt, 'status_code' | 'error' | 'response_body'>): WebhookAttempt => ({
    attempted_at: new Date(started).toISOString(),
    duration_ms: Date.now() - started,
    ...fields,
  })
  let url: URL
  let secrets: string[]
  try {
    url = new URL(endpoint.url)
    const keyring = keyringOf(config)
    const context = secretContext(endpoint.endpointUuid)
    secrets = [open(keyring, { ciphertext: endpoint.secretCiphertext, keyId: endpoint.secretKeyId }, context)]
    if (endpoint.previousCiphertext && endpoint.previousKeyId) {
      secrets.push(open(keyring, { ciphertext: endpoint.previousCiphertext, keyId: endpoint.previousKeyId }, context))
    }
  } catch {
    return {
      ok: false,
      record: record({
        status_code: null,
        error: 'The endpoint could not be signed for: its secret does not open with the configured keys',
        response_body: null,
      }),
    }
  }
  try {
    const response = await sendToolRequest(
      {
        method: 'POST',
        url,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'agent-workspace-webhooks/1',
          'webhook-id': eventId,
          'webhook-timestamp': String(at.getTime() / 1000),
          'webhook-signature': signatures(secrets, eventId, at, payload),
        },
        credentialHeaders: {},
        body: payload,
      },
      {
        timeoutMs: config.webhooks.timeoutMs,
        maxResponseBytes: MAX_RESPONSE_BYTES,
        allowPrivateNetwork: config.webhooks.allowPrivateNetwork,
        followRedirects: false,
      },
    )
    const ok = response.status >= 200 && response.status < 300
    const body = response.body.subarray(0, KEPT_BYTES).toString('utf8').toWellFormed().replaceAll('\u0000', '')
    return {
      ok,
      record: record({
        status_code: response.status,
        error: ok ? null : `The endpoint answered ${response.status}`,
        response_body: body || null,
      }),
    }
  } catch (error) {
    return { ok: false, record: record({ status_code: null, error: failure(error, config, url), response_body: null }) }
  }
}
