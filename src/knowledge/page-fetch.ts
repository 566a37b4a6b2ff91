/**
 * One read of a URL document's page (docs/api/knowledge.md, "Ingestion" and "Keeping URL
 * documents in sync"), shared by ingestion and sync: a GET through the tools' outbound guard
 * (src/catalog/tool-http.ts) with the Accept header of trainable types, conditional when the
 * validators of an earlier read are given, at most `UPLOAD_MAX_BYTES`. What an answer's status
 * means is the caller's (ingestion retries a 5xx, sync records it).
 */
import { sendToolRequest, ToolHttpError } from '../catalog/index.ts'
import type { Config } from '../platform/config.ts'

/** The types a page is asked for, trainable ones first. */
const ACCEPT = 'text/html, text/plain, text/markdown, application/pdf, */*;q=0.5'

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
}

/** The outbound guard refused the request for good (see {@link REFUSED_REASONS}); its message says why. */
export class PageRefusedError extends Error {
  override name = 'PageRefusedError'
}

/** The validators of an answer's headers (names in lower case), for the next conditional request. */
export function validatorsOf(headers: Record<string, string>): PageValidators {
  return { etag: headers.etag?.slice(0, 1024) || null, lastModified: headers['last-modified']?.slice(0, 256) || null }
}

/**
 * Reads `url` once; `since`, the validators of an earlier read, makes the request conditional
 * (`If-None-Match`, `If-Modified-Since`), so a 304 may come back.
 * @throws PageRefusedError for a request the guard refused for good; ToolHttpError for a timeout
 *   or a network failure (worth another try).
 */
export async function fetchPage(url: string, config: Pick<Config, 'tools' | 'uploadMaxBytes'>, since?: PageValidators): Promise<Page> {
  const headers: Record<string, string> = { accept: ACCEPT }
  if (since?.etag) headers['if-none-match'] = since.etag
  if (since?.lastModified) headers['if-modified-since'] = since.lastModified
  try {
    const answer = await sendToolRequest(
      { method: 'GET', url: new URL(url), headers, credentialHeaders: {} },
      { ...config.tools, maxResponseBytes: config.uploadMaxBytes },
    )
    const mimeType = answer.contentType.split(';')[0]?.trim().toLowerCase() || 'text/html'
    return {
      status: answer.status,
      bytes: answer.body,
      mimeType,
      contentType: answer.contentType || mimeType,
      validators: validatorsOf(answer.headers),
    }
  } catch (error) {
    if (error instanceof ToolHttpError && REFUSED_REASONS.has(error.reason)) throw new PageRefusedError(error.message)
    throw error
  }
}
