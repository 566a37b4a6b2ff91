import { defineEntity, p, type InferEntity } from '@mikro-orm/core'

/** An idempotency key's state: its first request is still being answered, or its answer is kept. */
export const IDEMPOTENCY_STATES = ['in_flight', 'done'] as const

/**
 * A kept `Idempotency-Key` (`idempotency_keys`, docs/api/conventions.md, "Idempotency keys"):
 * keyed by a SHA-256 of the caller's credential, the key, the method and the path; the first
 * request's fingerprint; the answer sealed with the service key; a lease while in flight.
 */
export const IdempotencyKey = defineEntity({
  name: 'IdempotencyKey',
  tableName: 'idempotency_keys',
  properties: {
    keyHash: p.string().length(64).primary().fieldName('key_hash'),
    fingerprint: p.string().length(64),
    state: p.enum(() => IDEMPOTENCY_STATES),
    answerCiphertext: p.text().nullable().fieldName('answer_ciphertext'),
    answerKeyId: p.string().length(64).nullable().fieldName('answer_key_id'),
    lockedUntil: p.datetime().fieldName('locked_until'),
    expiresAt: p.datetime().fieldName('expires_at').index(),
    createdAt: p
      .datetime()
      .fieldName('created_at')
      .onCreate(() => new Date()),
  },
})

export type IIdempotencyKey = InferEntity<typeof IdempotencyKey>
