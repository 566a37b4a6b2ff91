/**
 * Where a sign-in through the provider may send the browser back to (docs/api/sso.md): paths of
 * the web console on this service's own origin, never anywhere else, so the sign-in routes cannot
 * be used to send someone to another site with a code.
 */

/** The console's root and its sign-in screen, as src/http/console.plugin.ts serves them. */
export const CONSOLE_ROOT = '/console'
export const CONSOLE_SIGN_IN = '/console/sign-in'

/** Longest `redirect` accepted, in characters. */
export const CONSOLE_PATH_MAX = 2000

/** `/console`, then nothing, a path or a query; visible ASCII only (no spaces, controls or non-ASCII to smuggle in). */
const SHAPE = /^\/console(?:[/?][\x21-\x7e]*)?$/

/**
 * Whether `redirect` is a console path: relative to this origin, under `/console`, with no
 * backslash (browsers read it as a slash, so `/console\..\..\evil` escapes), no fragment, and read
 * by a URL parser exactly as written (so no `..`, `%2e%2e` or other spelling resolves elsewhere).
 */
export function isConsolePath(redirect: string): boolean {
  if (redirect.length > CONSOLE_PATH_MAX || !SHAPE.test(redirect) || /[\\#]/.test(redirect)) return false
  const base = 'http://console.invalid'
  const url = new URL(redirect, base)
  return url.origin === base && `${url.pathname}${url.search}` === redirect
}

/**
 * The absolute URL of console path `path` (checked by {@link isConsolePath}) on `appUrl`, with
 * query parameters `params` added (a one-time code, an error reason).
 */
export function consoleUrl(appUrl: string, path: string, params: Record<string, string>): string {
  const url = new URL(path, 'http://console.invalid')
  for (const [name, value] of Object.entries(params)) url.searchParams.set(name, value)
  return `${appUrl}${url.pathname}${url.search}`
}
