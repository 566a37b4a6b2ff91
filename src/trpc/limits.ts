/**
 * The rate-limit middlewares of sign-in and sign-up (docs/api/authentication.md): per e-mail and per
 * client address, counted before the password is checked.
 */
import type { RateLimiterAbstract } from 'rate-limiter-flexible'
import { middleware } from './init.ts'
import { consume } from './rate-limit.ts'

/** Limits sign-in attempts per e-mail address and per client address. */
export const signInLimit = middleware(async ({ ctx, getRawInput, next }) => {
  const raw = await getRawInput()
  const email = typeof raw === 'object' && raw !== null && 'email' in raw && typeof raw.email === 'string' ? raw.email.trim().toLowerCase() : ''
  const scope = ctx.serviceId ?? '-'
  const pairs: [RateLimiterAbstract, string][] = [[ctx.deps.limits.signInPerAddress, ctx.ip]]
  if (email) pairs.push([ctx.deps.limits.signInPerEmail, `${scope}:${email}`])
  await consume(pairs)
  return next()
})

/** Limits sign-up attempts per client address (shares the sign-in address budget). */
export const signUpLimit = middleware(async ({ ctx, next }) => {
  await consume([[ctx.deps.limits.signInPerAddress, ctx.ip]])
  return next()
})
