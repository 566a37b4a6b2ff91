/**
 * Single sign-on with an OpenID Connect provider (docs/api/sso.md): which provider identity is
 * which user, and the two short-lived secrets of one sign-in (its state while the person is at the
 * provider, then the one-time code the console exchanges for a token).
 */
import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { User } from './user-workspace.entity.ts'

/**
 * A provider identity linked to a user (`user_identities`): the provider's issuer and its `sub`
 * for the person, unique together, so one identity signs in as one user. `email` is the address
 * the provider gave when the link was made.
 */
export const UserIdentity = defineEntity({
  name: 'UserIdentity',
  tableName: 'user_identities',
  uniques: [{ name: 'user_identities_issuer_subject_unique', properties: ['issuer', 'subject'] }],
  indexes: [{ properties: ['user'] }],
  properties: {
    id: p.bigint('number').primary().autoincrement(),
    user: () => p.manyToOne(User).fieldName('user_id').deleteRule('cascade'),
    issuer: p.string().length(512),
    subject: p.string().length(255),
    email: p.string().length(320),
    createdAt: p
      .datetime()
      .fieldName('created_at')
      .onCreate(() => new Date()),
  },
})

export type IUserIdentity = InferEntity<typeof UserIdentity>

/**
 * A sign-in waiting for the provider's answer (`oidc_states`), keyed by a SHA-256 of its `state`
 * and used once: the PKCE verifier and the nonce its answer must match, and the console path to
 * return to.
 */
export const OidcState = defineEntity({
  name: 'OidcState',
  tableName: 'oidc_states',
  properties: {
    stateHash: p.string().length(64).primary().fieldName('state_hash'),
    codeVerifier: p.string().length(128).fieldName('code_verifier').hidden(),
    nonce: p.string().length(128).hidden(),
    redirect: p.string().length(2048),
    expiresAt: p.datetime().fieldName('expires_at').index(),
    createdAt: p
      .datetime()
      .fieldName('created_at')
      .onCreate(() => new Date()),
  },
})

export type IOidcState = InferEntity<typeof OidcState>

/**
 * A one-time code of a finished sign-in (`oidc_login_codes`), keyed by its SHA-256 (the code
 * itself is stored nowhere): exchanged once, within a minute, for a basic token of its user.
 */
export const OidcLoginCode = defineEntity({
  name: 'OidcLoginCode',
  tableName: 'oidc_login_codes',
  properties: {
    codeHash: p.string().length(64).primary().fieldName('code_hash'),
    user: () => p.manyToOne(User).fieldName('user_id').deleteRule('cascade'),
    expiresAt: p.datetime().fieldName('expires_at').index(),
    createdAt: p
      .datetime()
      .fieldName('created_at')
      .onCreate(() => new Date()),
  },
})

export type IOidcLoginCode = InferEntity<typeof OidcLoginCode>
