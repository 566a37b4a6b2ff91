/**
 * The check a URL the service will call later passes when it is stored (a knowledge URL, a
 * webhook endpoint): well-formed, http or https, no credentials in it, and (unless private
 * addresses are allowed) neither naming nor resolving to a loopback, private, link-local or
 * otherwise non-unicast address. A name that does not resolve now passes: calling it fails then,
 * and every call goes through the outbound guard again (src/catalog/tool-http.ts), which checks
 * the address it connects to.
 */
import { lookup } from 'node:dns/promises'
import ipaddr from 'ipaddr.js'

/** What is wrong with a URL: not one, not http(s), credentials in it, or a private address. */
export type UrlProblem = 'invalid' | 'scheme' | 'credentials' | 'private'

/** Answers the URL, normalised, or its problem. */
export async function checkOutboundUrl(raw: string, allowPrivateNetwork: boolean): Promise<{ url: string } | { problem: UrlProblem }> {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return { problem: 'invalid' }
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { problem: 'scheme' }
  if (url.username || url.password) return { problem: 'credentials' }
  if (allowPrivateNetwork) return { url: url.toString() }
  const host = url.hostname.replace(/^\[|\]$/g, '')
  const addresses = ipaddr.isValid(host)
    ? [host]
    : await lookup(host, { all: true }).then(
        (found) => found.map((entry) => entry.address),
        () => [],
      )
  for (const address of addresses) {
    if (ipaddr.process(address).range() !== 'unicast') return { problem: 'private' }
  }
  return { url: url.toString() }
}
