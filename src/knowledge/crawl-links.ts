/**
 * The pure parts of a crawl (docs/api/knowledge.md, "Crawling a site"): which URLs belong to a
 * crawl (its scope), the links of an HTML page (htmlparser2, the parser html-to-text extracts
 * pages with), the entries of a sitemap (fast-xml-parser) and the rules of a robots.txt
 * (robots-parser). Nothing here touches the network or the database.
 */
import { createRequire } from 'node:module'
import { setImmediate as yieldToLoop } from 'node:timers/promises'
import { XMLParser } from 'fast-xml-parser'
import { Parser } from 'htmlparser2'
import { decodeText } from './extract.ts'
import { CRAWLER_TOKEN } from './page-fetch.ts'

/** The URLs a crawl may read: one origin, under one path. */
export interface CrawlScope {
  origin: string
  /** Paths start with it (a directory, ending in `/`); the directory's own path without the slash is in scope too. */
  prefix: string
}

/**
 * The scope of a crawl from `rootUrl`: its origin, under the directory of its path. A path whose
 * last segment names a file (has a dot, or is empty) is scoped to its folder (`/docs/intro.html`
 * and `/docs/` to `/docs/`); any other is a folder itself (`/docs` to `/docs/`, not `/docs-old`).
 * @throws TypeError for a URL that does not parse (training checked it already).
 */
export function crawlScope(rootUrl: string): CrawlScope {
  const url = new URL(rootUrl)
  const path = url.pathname
  const slash = path.lastIndexOf('/')
  const last = path.slice(slash + 1)
  const prefix = last === '' || last.includes('.') ? path.slice(0, slash + 1) : `${path}/`
  return { origin: url.origin, prefix }
}

/** Whether `url` is in `scope`: same origin, path under its prefix. */
export function inScope(scope: CrawlScope, url: string): boolean {
  const parsed = URL.parse(url)
  if (!parsed || parsed.origin !== scope.origin) return false
  return parsed.pathname.startsWith(scope.prefix) || `${parsed.pathname}/` === scope.prefix
}

/**
 * The key of a page: `href` resolved against `base`, without its fragment (one page, whatever
 * part of it a link points at); null unless it is an http or https URL.
 */
export function pageUrl(href: string, base: string | URL): string | null {
  const url = URL.parse(href.trim(), String(base))
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) return null
  url.hash = ''
  return url.href
}

/** Bytes the HTML parser is fed at once; the event loop runs other work in between. */
const PARSE_SLICE = 256 * 1024

/**
 * The pages an HTML page links to (`<a href>`, `<area href>`, resolved against its `<base href>`
 * or `pageAddress`), each once, in document order, at most `max`. Fed to htmlparser2 in slices,
 * so a page of many megabytes does not hold the event loop.
 * @param contentType the answer's Content-Type: its charset decodes the bytes.
 */
export async function linksOf(bytes: Uint8Array, contentType: string, pageAddress: string, max: number): Promise<string[]> {
  const html = decodeText(bytes, contentType)
  const hrefs: string[] = []
  let base: string | null = null
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (name === 'base' && base === null && attributes.href) base = attributes.href
        else if ((name === 'a' || name === 'area') && attributes.href && hrefs.length < max * 4) hrefs.push(attributes.href)
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  )
  for (let start = 0; start < html.length; start += PARSE_SLICE) {
    parser.write(html.slice(start, start + PARSE_SLICE))
    if (start + PARSE_SLICE < html.length) await yieldToLoop()
  }
  parser.end()
  const resolvedBase = (base === null ? null : URL.parse(base, pageAddress)) ?? pageAddress
  const links = new Set<string>()
  for (const href of hrefs) {
    const url = pageUrl(href, resolvedBase)
    if (url) links.add(url)
    if (links.size >= max) break
  }
  return [...links]
}

/** Sitemap entries: pages (`<urlset><url><loc>`) and nested sitemaps (`<sitemapindex><sitemap><loc>`). */
export interface SitemapEntries {
  pages: string[]
  sitemaps: string[]
}

const SITEMAP_PARSER = new XMLParser({
  ignoreAttributes: true,
  removeNSPrefix: true,
  parseTagValue: false,
  isArray: (name) => name === 'url' || name === 'sitemap',
})

/** The `loc` of each item, where it is text. */
function locs(items: unknown): string[] {
  if (!Array.isArray(items)) return []
  return items.flatMap((item: unknown) => {
    const loc = item !== null && typeof item === 'object' && 'loc' in item ? item.loc : undefined
    return typeof loc === 'string' && loc.trim() ? [loc.trim()] : []
  })
}

/**
 * The entries of a sitemap (the sitemaps.org XML format, a `<urlset>` or a `<sitemapindex>`), as
 * written; a text that is not such XML has none.
 */
export function sitemapEntries(xml: string): SitemapEntries {
  let doc: unknown
  try {
    doc = SITEMAP_PARSER.parse(xml)
  } catch {
    return { pages: [], sitemaps: [] }
  }
  const root = doc !== null && typeof doc === 'object' ? (doc as Record<string, unknown>) : {}
  const child = (name: string, key: string) => {
    const node = root[name]
    return node !== null && typeof node === 'object' ? (node as Record<string, unknown>)[key] : undefined
  }
  return { pages: locs(child('urlset', 'url')), sitemaps: locs(child('sitemapindex', 'sitemap')) }
}

/** The part of robots-parser used here. */
type ParseRobots = (url: string, robotstxt: string) => { isAllowed(url: string, ua?: string): boolean | undefined }
/**
 * robots-parser, required: its `module.exports` is the parser, but its types declare an ES default
 * export, which tsc (NodeNext) then reads as `exports.default`, absent at run time.
 */
const parseRobots: ParseRobots = createRequire(import.meta.url)('robots-parser')

/** Which URLs of an origin its robots.txt lets this service read. */
export type RobotsRules = (url: string) => boolean

/** Rules that allow everything: no robots.txt, or one that could not be had for good (4xx). */
export const ALLOW_ALL: RobotsRules = () => true

/**
 * The rules of robots.txt `text` (served at `robotsUrl`) for this service: the group naming
 * {@link CRAWLER_TOKEN}, else the `*` group; `Allow` and `Disallow` with `*` and `$` patterns, the
 * longest match winning (RFC 9309). Other lines (`Crawl-delay`, `Sitemap`) are not used.
 */
export function robotsRules(robotsUrl: string, text: string): RobotsRules {
  const robots = parseRobots(robotsUrl, text)
  return (url) => robots.isAllowed(url, CRAWLER_TOKEN) !== false
}
