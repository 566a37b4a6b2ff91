/**
 * The text of a document to train an agent on (docs/api/knowledge.md, "Extraction and
 * chunking"), through well-kept parsers only: PDF by PDF.js (unpdf's build, which runs in the
 * calling thread with no worker and fetches nothing), DOCX by mammoth, HTML by html-to-text,
 * CSV by csv-parse; JSON is flattened to `path: value` lines, Markdown and plain text are kept as
 * they are. Everything here is pure: bytes in, text out, no database, no network.
 *
 * Failures are {@link ExtractionError}s whose message a user can act on; the parser's own error,
 * when there is one, is the `cause` (for logs, never for the user).
 */
import { parse as parseCsv } from 'csv-parse/sync'
import { convert as htmlToText, type HtmlToTextOptions } from 'html-to-text'
import mammoth from 'mammoth'
import { getDocumentProxy } from 'unpdf'

/** DOCX's MIME type (file-type's name for it). */
const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'

/** The MIME types a document can be trained from: the uploads and URLs the ingestion accepts. */
export const TRAINABLE_TYPES = ['text/plain', 'text/markdown', 'text/html', 'application/pdf', DOCX, 'text/csv', 'application/json'] as const

/** One of {@link TRAINABLE_TYPES}. */
export type TrainableType = (typeof TRAINABLE_TYPES)[number]

/** What {@link TRAINABLE_TYPES} are, for messages. */
const TRAINABLE_NAMES = 'plain text, Markdown, HTML, PDF, DOCX, CSV and JSON'

/**
 * A document whose text cannot be had. The message says why in words a user can act on (an
 * encrypted PDF, a corrupt DOCX, a file without text); it never carries a stack or a parser's
 * wording, which stays in `cause`.
 */
export class ExtractionError extends Error {
  override name = 'ExtractionError'
}

/** How {@link extractText} may treat the bytes it is given. */
export interface ExtractOptions {
  /** See {@link extractText}. */
  handOver?: boolean
}

/**
 * Whether documents of this MIME type can be trained. Parameters (`; charset=...`) and case are
 * ignored, as in a `Content-Type` header.
 */
export function isTrainable(mimeType: string): boolean {
  return (TRAINABLE_TYPES as readonly string[]).includes(essence(mimeType))
}

/**
 * The text of a document.
 * @param bytes the whole file (uploads are capped by `UPLOAD_MAX_BYTES`; the parsers read it in
 *   memory).
 * @param mimeType one of {@link TRAINABLE_TYPES}, as a stored upload's `mime_type` or a URL's
 *   `Content-Type`; a `charset` parameter is honoured for the text types (UTF-8 otherwise).
 * @param o.handOver the caller gives `bytes` up and never reads them again: when they are the
 *   whole of their `ArrayBuffer`, a PDF's parser takes that buffer over (detaches it) instead of
 *   copying the file; other bytes are copied as without it.
 * @returns the text, with `\n` line ends, no NUL, and neither leading nor trailing whitespace:
 *   PDF pages and DOCX paragraphs separated by a blank line; HTML without scripts, styles,
 *   navigation, images or hidden elements, keeping headings, lists, tables and the text of
 *   links; CSV as one line per row, `column: value; ...` by the header row; JSON as one
 *   `path: value` line per leaf.
 * @throws ExtractionError for an empty file, a type that cannot be trained, an encrypted or
 *   corrupt PDF or DOCX, malformed CSV or JSON, any other parser failure, and a document with no
 *   text at all.
 */
export async function extractText(bytes: Uint8Array, mimeType: string, o: ExtractOptions = {}): Promise<string> {
  if (!bytes.length) throw new ExtractionError('The file is empty')
  const type = essence(mimeType)
  switch (type) {
    case 'application/pdf':
      return nonEmpty(await pdfText(bytes, o), 'The PDF has no text layer (a scanned PDF?); upload a PDF whose text can be selected')
    case DOCX:
      return nonEmpty(await docxText(bytes), 'The file contains no text')
    case 'text/html':
      return extractHtml(decodeText(bytes, mimeType))
    case 'text/csv':
      return nonEmpty(csvText(decodeText(bytes, mimeType)), 'The file contains no text')
    case 'application/json':
      return nonEmpty(jsonText(decodeText(bytes, mimeType)), 'The file contains no text')
    case 'text/plain':
    case 'text/markdown':
      return nonEmpty(decodeText(bytes, mimeType), 'The file contains no text')
    default:
      throw new ExtractionError(`Files of type ${type || 'unknown'} cannot be trained; use ${TRAINABLE_NAMES}`)
  }
}

/**
 * The readable text of an HTML page (a fetched URL), as {@link extractText} gives it for
 * `text/html`.
 * @throws ExtractionError when the page has no text, or the parser fails.
 */
export async function extractHtml(html: string): Promise<string> {
  let text: string
  try {
    text = htmlToText(html, HTML_OPTIONS)
  } catch (error) {
    throw new ExtractionError('The HTML page could not be read', { cause: error })
  }
  return nonEmpty(tidy(text), 'The page contains no text')
}

/** Elements whose text is not the page's content: code, styling, chrome, hidden parts. */
const HTML_SKIPPED = ['script', 'style', 'noscript', 'template', 'svg', 'canvas', 'iframe', 'object', 'embed', 'nav', 'img', '[hidden]', '[aria-hidden="true"]']
const HTML_OPTIONS: HtmlToTextOptions = {
  wordwrap: false,
  // No cut at 16 M characters (html-to-text's default): uploads are capped already.
  limits: { maxInputLength: Number.MAX_SAFE_INTEGER },
  selectors: [
    ...HTML_SKIPPED.map((selector) => ({ selector, format: 'skip' })),
    { selector: 'a', options: { ignoreHref: true } },
    ...['h1', 'h2', 'h3', 'h4', 'h5', 'h6'].map((selector) => ({ selector, options: { uppercase: false } })),
    // Cells side by side in columns; the default layout runs them together into one word.
    { selector: 'table', format: 'dataTable', options: { uppercaseHeaderCells: false, maxColumnWidth: 1_000, colSpacing: 3 } },
  ],
}

/**
 * Pages read between two releases of PDF.js's document-wide caches: kept for the whole document,
 * they grow by about 55 MB per 1,000 pages of text (docs/benchmarks.md, "A large PDF").
 */
const PDF_CLEANUP_PAGES = 100

async function pdfText(bytes: Uint8Array, o: ExtractOptions): Promise<string> {
  let pdf: Awaited<ReturnType<typeof getDocumentProxy>>
  try {
    // PDF.js takes over (detaches) the buffer it is given, and refuses a Node Buffer: a view of the
    // caller's buffer when it is handed over, else a copy.
    const data = o.handOver ? new Uint8Array(bytes.buffer, bytes.byteOffset, bytes.byteLength) : new Uint8Array(bytes)
    pdf = await getDocumentProxy(data, { verbosity: 0 })
  } catch (error) {
    const name = error instanceof Error ? error.name : ''
    if (name === 'PasswordException') {
      throw new ExtractionError('The PDF is encrypted with a password; upload an unencrypted copy', { cause: error })
    }
    throw new ExtractionError('The PDF is corrupt or not a PDF; export it again and upload the new copy', { cause: error })
  }
  try {
    // One page at a time, each released once its text is read: asking for every page at once
    // keeps all their parsed content alive together, hundreds of MB for a large file.
    const pages: string[] = []
    for (let number = 1; number <= pdf.numPages; number++) {
      const page = await pdf.getPage(number)
      const { items } = await page.getTextContent()
      page.cleanup()
      const parts: string[] = []
      for (const item of items) if ('str' in item) parts.push(item.hasEOL ? `${item.str}\n` : item.str)
      // Split and join, not a global replace: V8 builds a replace's result as a rope of its
      // pieces, which would keep hundreds of small strings alive per page until the end; a join
      // is one flat string.
      pages.push(parts.join('').split(/[^\S\n]+/).join(' '))
      if (number % PDF_CLEANUP_PAGES === 0) await pdf.cleanup()
    }
    return tidy(pages.join('\n\n'))
  } catch (error) {
    throw new ExtractionError('The PDF is damaged and its text could not be read; export it again and upload the new copy', { cause: error })
  } finally {
    await pdf.loadingTask.destroy()
  }
}

/** The first bytes of an OLE compound file: a password-protected Office file, or an old `.doc`. */
const OLE_MAGIC = [0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]

async function docxText(bytes: Uint8Array): Promise<string> {
  if (OLE_MAGIC.every((byte, i) => bytes[i] === byte)) {
    throw new ExtractionError('The Word file is password-protected or in the old .doc format; save it as an unprotected .docx and upload it again')
  }
  try {
    const { value } = await mammoth.extractRawText({ buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) })
    return tidy(value)
  } catch (error) {
    throw new ExtractionError('The DOCX file is corrupt or not a DOCX file; save it again from your editor and upload the copy', { cause: error })
  }
}

/**
 * One line per data row, `column: value` pairs joined by `; `, named by the header row (a column
 * past the header is `column N`); empty values are left out. A file of only a header is its
 * header. The delimiter is the first line's most frequent of `,`, `;` and tab.
 */
function csvText(text: string): string {
  let rows: string[][]
  try {
    rows = parseCsv(text, { delimiter: csvDelimiter(text), bom: true, relax_column_count: true, skip_empty_lines: true, trim: true })
  } catch (error) {
    const line = (error as { lines?: number }).lines
    throw new ExtractionError(`The CSV file is malformed${line ? ` near line ${line}` : ''}; check its quotes and delimiters`, { cause: error })
  }
  const oneLine = (value: string) => value.replace(/\s*\n\s*/g, ' ')
  const [header = [], ...data] = rows
  if (!data.length) return header.filter(Boolean).map(oneLine).join('; ')
  const lines = data.map((row) =>
    row
      .map((value, i) => (value ? `${oneLine(header[i] || `column ${i + 1}`)}: ${oneLine(value)}` : ''))
      .filter(Boolean)
      .join('; '),
  )
  return lines.filter(Boolean).join('\n')
}

function csvDelimiter(text: string): string {
  const firstLine = text.slice(0, text.indexOf('\n') === -1 ? undefined : text.indexOf('\n'))
  const counts = [',', ';', '\t'].map((delimiter) => [delimiter, firstLine.split(delimiter).length] as const)
  return counts.reduce((best, next) => (next[1] > best[1] ? next : best))[0]
}

/**
 * One `path: value` line per leaf, in document order: `plans[0].price: 10`,
 * `["odd key"].x: true`; the root's own value when it is not an object or array. Empty objects
 * and arrays have nothing to say and are left out.
 */
function jsonText(text: string): string {
  let root: unknown
  try {
    root = JSON.parse(text)
  } catch (error) {
    throw new ExtractionError('The JSON file is not valid JSON; fix it, or upload it as a .txt file', { cause: error })
  }
  const lines: string[] = []
  // A stack, not recursion: a deeply nested file must not overflow the call stack.
  const stack: Array<[string, unknown]> = [['', root]]
  while (stack.length) {
    const [path, value] = stack.pop() as [string, unknown]
    if (value !== null && typeof value === 'object') {
      const entries = Array.isArray(value)
        ? value.map((item, i): [string, unknown] => [`${path}[${i}]`, item])
        : Object.entries(value).map(([key, item]): [string, unknown] => [keyPath(path, key), item])
      for (let i = entries.length - 1; i >= 0; i--) stack.push(entries[i])
    } else {
      const shown = typeof value === 'string' ? value : String(value)
      lines.push(path ? `${path}: ${shown}` : shown)
    }
  }
  return lines.join('\n')
}

function keyPath(path: string, key: string): string {
  if (/^[\p{L}_$][\p{L}\p{N}_$]*$/u.test(key)) return path ? `${path}.${key}` : key
  return `${path}[${JSON.stringify(key)}]`
}

/** Text bytes as a string: the `charset` of the type when it names one the runtime knows, else UTF-8; a BOM is dropped, bad bytes become U+FFFD. */
export function decodeText(bytes: Uint8Array, mimeType: string): string {
  const charset = /;\s*charset\s*=\s*"?([\w.:-]+)"?/i.exec(mimeType)?.[1]
  let text: string
  try {
    text = new TextDecoder(charset ?? 'utf-8').decode(bytes)
  } catch {
    text = new TextDecoder('utf-8').decode(bytes)
  }
  // Line ends as `\n`; NUL is never text (and PostgreSQL refuses it in text columns).
  return text.replace(/\r\n?/g, '\n').replaceAll('\u0000', '')
}

/** Parser output made even: `\n` line ends, no NUL, no trailing spaces, at most one blank line in a row. */
function tidy(text: string): string {
  return text
    .replace(/\r\n?/g, '\n')
    .replaceAll('\u0000', '')
    .replace(/[^\S\n]+\n/g, '\n')
    .replace(/\n{3,}/g, '\n\n')
}

/** The text trimmed, or the error when nothing is left. */
function nonEmpty(text: string, emptyMessage: string): string {
  const trimmed = text.trim()
  if (!trimmed) throw new ExtractionError(emptyMessage)
  return trimmed
}

/** A MIME type without parameters, lower-case. */
function essence(mimeType: string): string {
  return mimeType.split(';', 1)[0].trim().toLowerCase()
}
