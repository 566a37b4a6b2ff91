/**
 * Bearer token material (docs/api/authentication.md): random 32 bytes behind a recognisable prefix,
 * stored only as a SHA-256 hash. A fast hash is right here, unlike for passwords: the plaintext
 * carries 256 random bits, so there is nothing to guess, and lookups stay one indexed query.
 */
import { hash, randomBytes } from 'node:crypto'
import type { TokenKind } from '../../entities/index.ts'

/** Prefix of each kind: `wst_` session (basic) tokens, `wat_` application access tokens. */
export const TOKEN_PREFIX: Record<TokenKind, string> = { basic: 'wst_', application: 'wat_' }

/**
 * SHA-256 of a token's plaintext, hex. Every authenticated request hashes its token (the token
 * cache's key): the one-shot `crypto.hash` costs a third of a `createHash` object.
 */
export function hashToken(plaintext: string): string {
  return hash('sha256', plaintext, 'hex')
}

/** A fresh token: plaintext (shown once), its hash and the displayable prefix (first 12 characters). */
export function newToken(kind: TokenKind): { plaintext: string; hash: string; prefix: string } {
  const plaintext = TOKEN_PREFIX[kind] + randomBytes(32).toString('base64url')
  return { plaintext, hash: hashToken(plaintext), prefix: plaintext.slice(0, 12) }
}
