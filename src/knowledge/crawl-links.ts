/**
 * The pure parts of a crawl (docs/api/knowledge.md, "Crawling a site"): which URLs belong to a
 * crawl (its scope), the links of an HTML page and what its robots meta allows (htmlparser2, the
 * parser html-to-text extracts pages with), the entries of a sitemap (fast-xml-parser) and the
 * rules and crawl delay of a robots.txt (robots-parser). Nothing here touches the network or the database.
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

/** What the crawl takes from an HTML page: its links, and whether the page lets itself be kept. */
export interface PageLinks {
  /** The pages it links to; none when its robots meta says `nofollow`. */
  links: string[]
  /** False when its robots meta says `noindex`: the page's links count, the page itself is not trained. */
  index: boolean
}

/**
 * Whether a token list holds `token`, in any case: a `rel` (space-separated) or a robots meta's
 * `content` (comma-separated, though pages write spaces too, so either separates).
 */
function hasToken(list: string | undefined, token: string): boolean {
  const tokens = list?.toLowerCase().split(/[\s,]+/) ?? []
  return tokens.includes(token)
}

/**
 * The pages an HTML page links to (`<a href>`, `<area href>`, resolved against its `<base href>`
 * or `pageAddress`), each once, in document order, at most `max`, and whether it may be kept.
 * Links the page marks `rel="nofollow"` are not followed, nor any when a robots meta (`<meta
 * name="robots">` or one named {@link CRAWLER_TOKEN}) says `nofollow` or `none`; such a meta
 * saying `noindex` or `none` makes `index` false: a site's own word on what a crawler may take.
 * Fed to htmlparser2 in slices, so a page of many megabytes does not hold the event loop.
 * @param contentType the answer's Content-Type: its charset decodes the bytes.
 */
export async function linksOf(bytes: Uint8Array, contentType: string, pageAddress: string, max: number): Promise<PageLinks> {
  const html = decodeText(bytes, contentType)
  const hrefs: string[] = []
  let base: string | null = null
  let follow = true
  let index = true
  const parser = new Parser(
    {
      onopentag(name, attributes) {
        if (name === 'base' && base === null && attributes.href) base = attributes.href
        else if ((name === 'a' || name === 'area') && attributes.href && hrefs.length < max * 4 && !hasToken(attributes.rel, 'nofollow')) {
          hrefs.push(attributes.href)
        } else if (name === 'meta' && isRobotsMeta(attributes.name)) {
          const none = hasToken(attributes.content, 'none')
          if (none || hasToken(attributes.content, 'nofollow')) follow = false
          if (none || hasToken(attributes.content, 'noindex')) index = false
        }
      },
    },
    { decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true },
  )
  for (let start = 0; start < html.length; start += PARSE_SLICE) {
    parser.write(html.slice(start, start + PARSE_SLICE))
    if (start + PARSE_SLICE < html.length) await yieldToLoop()
  }
  parser.end()
  if (!follow) return { links: [], index }
  const resolvedBase = (base === null ? null : URL.parse(base, pageAddress)) ?? pageAddress
  const links = new Set<string>()
  for (const href of hrefs) {
    const url = pageUrl(href, resolvedBase)
    if (url) links.add(url)
    if (links.size >= max) break
  }
  return { links: [...links], index }
}

/** Whether a `<meta name>` speaks to this crawler: `robots` (every crawler) or {@link CRAWLER_TOKEN}, in any case. */
function isRobotsMeta(name: string | undefined): boolean {
  const lower = name?.trim().toLowerCase()
  return lower === 'robots' || lower === CRAWLER_TOKEN
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
type ParseRobots = (
  url: string,
  robotstxt: string,
) => { isAllowed(url: string, ua?: string): boolean | undefined; getCrawlDelay(ua?: string): number | undefined }
/**
 * robots-parser, required: its `module.exports` is the parser, but its types declare an ES default
 * export, which tsc (NodeNext) then reads as `exports.default`, absent at run time.
 */
const parseRobots: ParseRobots = createRequire(import.meta.url)('robots-parser')

/**
 * Longest wait between two page reads a robots.txt `Crawl-delay` gets, in milliseconds: a site
 * asking for minutes between pages would hold a crawl, and its root's sync claim, for nothing.
 */
export const CRAWL_DELAY_MAX_MS = 10_000

/** What an origin's robots.txt asks of this service. */
export interface RobotsRules {
  /** Whether it lets this service read `url`. */
  allows: (url: string) => boolean
  /** The wait it asks for between two page reads, in milliseconds (0: none). */
  delayMs: number
}

/** Rules that allow everything at any pace: no robots.txt, or one that could not be had for good (4xx). */
export const ALLOW_ALL: RobotsRules = { allows: () => true, delayMs: 0 }

/**
 * The rules of robots.txt `text` (served at `robotsUrl`) for this service: the group naming
 * {@link CRAWLER_TOKEN}, else the `*` group; `Allow` and `Disallow` with `*` and `$` patterns, the
 * longest match winning (RFC 9309), and that group's `Crawl-delay` in seconds (fractions too),
 * at most {@link CRAWL_DELAY_MAX_MS}; a negative or unreadable one is none. `Sitemap` lines are
 * not used (the crawl reads /sitemap.xml).
 */
export function robotsRules(robotsUrl: string, text: string): RobotsRules {
  const robots = parseRobots(robotsUrl, text)
  const seconds = robots.getCrawlDelay(CRAWLER_TOKEN)
  const delayMs = seconds !== undefined && seconds > 0 ? Math.min(CRAWL_DELAY_MAX_MS, Math.ceil(seconds * 1000)) : 0
  return { allows: (url) => robots.isAllowed(url, CRAWLER_TOKEN) !== false, delayMs }
}
