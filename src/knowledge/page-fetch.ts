/**
 * One read of a URL document's page (docs/api/knowledge.md, "Ingestion", "Keeping URL documents
 * in sync" and "Crawling a site"), shared by ingestion, sync and crawls: a GET through the tools'
 * outbound guard (src/catalog/tool-http.ts) with the Accept header of trainable types, conditional
 * when the validators of an earlier read are given, at most `UPLOAD_MAX_BYTES`, and for a crawl's
 * reads no redirect to another origin. What an answer's status means is the caller's (ingestion
 * retries a 5xx, sync records it, a crawl skips the page).
 */
import { sendToolRequest, ToolHttpError } from '../catalog/index.ts'
import type { Config } from '../platform/config.ts'

/** The types a page is asked for, trainable ones first. */
const ACCEPT = 'text/html, text/plain, text/markdown, application/pdf, */*;q=0.5'

/** The product token sites name in `robots.txt` to address this service's reads (docs/api/knowledge.md, "Crawling a site"). */
export const CRAWLER_TOKEN = 'agent-workspace-crawler'
/** Sent with every read, so a site's logs and its robots.txt can tell these reads apart. */
const USER_AGENT = `${CRAWLER_TOKEN}/1 (knowledge)`

/** Guard failures that no retry mends: a blocked address, an answer over the size cap, a bad or endless redirect. */
const REFUSED_REASONS = new Set(['refused', 'too_large', 'redirect'])

/** The validators of a page, for the next conditional request; null where it gave none. */
export interface PageValidators {
  etag: string | null
  lastModified: string | null
}

/** A page as it was answered. */
export interface Page {
  status: number
  bytes: Uint8Array
  /** The media type without parameters, lower case (`text/html` when the answer named none). */
  mimeType: string
  /** The whole Content-Type: its charset decodes the page. */
  contentType: string
  validators: PageValidators
  /** The URL that answered, after the redirects followed. */
  url: string
}

/** How {@link fetchPage} asks. */
export interface PageRequest {
  /** The validators of an earlier read: the request is conditional, so a 304 may come back. */
  since?: PageValidators
  /** Follow redirects within the URL's origin only; one to another origin is refused (a crawl's reads). */
  sameOrigin?: boolean
  /** Ends the read early (a crawl's time budget): a ToolHttpError with reason `cancelled`. */
  signal?: AbortSignal
}

/** The outbound guard refused the request for good (see {@link REFUSED_REASONS}); its message says why. */
export class PageRefusedError extends Error {
  override name = 'PageRefusedError'
  constructor(
    message: string,
    /** The guard's reason: `refused` (a blocked address), `too_large` or `redirect`. */
    readonly reason: string,
  ) {
    super(message)
  }
}

/** The validators of an answer's headers (names in lower case), for the next conditional request. */
export function validatorsOf(headers: Record<string, string>): PageValidators {
  return { etag: headers.etag?.slice(0, 1024) || null, lastModified: headers['last-modified']?.slice(0, 256) || null }
}

/** Whether {@link fetchPage} sends validators for `since`: a 304 means something only then. */
export const isConditional = (since: PageValidators | undefined): boolean => Boolean(since?.etag || since?.lastModified)

/**
 * Reads `url` once, at most `UPLOAD_MAX_BYTES` of it (after decompression). `o.since` makes the
 * request conditional (`If-None-Match`, `If-Modified-Since`); `o.sameOrigin` refuses a redirect
 * to another origin.
 * @throws PageRefusedError for a request the guard refused for good (a blocked address, an answer
 *   over the cap, a bad, endless or refused redirect); ToolHttpError for a timeout or a network
 *   failure (worth another try), or `o.signal` aborted (reason `cancelled`).
 */
export async function fetchPage(url: string, config: Pick<Config, 'tools' | 'uploadMaxBytes'>, o: PageRequest = {}): Promise<Page> {
  const headers: Record<string, string> = { accept: ACCEPT, 'user-agent': USER_AGENT }
  if (o.since?.etag) headers['if-none-match'] = o.since.etag
  if (o.since?.lastModified) headers['if-modified-since'] = o.since.lastModified
  try {
    const answer = await sendToolRequest(
      { method: 'GET', url: new URL(url), headers, credentialHeaders: {} },
      { ...config.tools, maxResponseBytes: config.uploadMaxBytes, sameOriginRedirects: o.sameOrigin ?? false },
      o.signal,
    )
    const mimeType = answer.contentType.split(';')[0]?.trim().toLowerCase() || 'text/html'
    return {
      status: answer.status,
      bytes: answer.body,
      mimeType,
      contentType: answer.contentType || mimeType,
      validators: validatorsOf(answer.headers),
      url: answer.url.href,
    }
  } catch (error) {
    if (error instanceof ToolHttpError && REFUSED_REASONS.has(error.reason)) throw new PageRefusedError(error.message, error.reason)
    throw error
  }
}
