/**
 * Wire conventions shared by every router (docs/api/conventions.md): the `{data}` envelope, the Laravel
 * paginator, `with`, timestamps, and JSON scalars that refuse strings.
 */
import { z } from 'zod'
import { toDate } from '../platform/sql.ts'

/**
 * trpc-to-openapi 3.3 turns on zod coercion for every number and boolean of an input object,
 * JSON bodies included (docs/api/conventions.md, stack notes), so `"true"` would pass as `true`. A
 * pipe is not coerced, so these wrappers keep JSON bodies strict. Use them for body fields;
 * query parameters arrive as strings and keep plain (coerced) numbers.
 */
export const jsonBoolean = () => z.boolean().pipe(z.boolean())
/** A JSON number that must be an integer within [min, max]; see {@link jsonBoolean}. */
export const jsonInt = (min: number, max: number) => z.number().pipe(z.number().int().min(min).max(max))

/**
 * Text that PostgreSQL can store: no NUL character and no lone surrogate (jsonb and text refuse
 * both, docs/api/conventions.md), bounded in length.
 */
export const text = (max: number, min = 0) =>
  z
    .string()
    .min(min)
    .max(max)
    .refine((value) => !value.includes('\u0000') && value.isWellFormed(), 'must not hold NUL characters or lone surrogates')

/**
 * Text from a model or an upstream made storable: NUL characters dropped, lone surrogates
 * replaced by U+FFFD (PostgreSQL refuses both; a client sending them gets a 400 instead).
 */
export const storableText = (value: string): string => value.replaceAll('\u0000', '').toWellFormed()

/** A JSON value with every string and key cleaned as {@link storableText}. */
export function storableValue(value: unknown): unknown {
  if (typeof value === 'string') return storableText(value)
  if (Array.isArray(value)) return value.map(storableValue)
  if (isRecord(value)) return Object.fromEntries(Object.entries(value).map(([key, item]) => [storableText(key), storableValue(item)]))
  return value
}

/** In JSON text: an escaped NUL, or an escaped surrogate (JSON.stringify escapes only lone ones). */
const UNSTORABLE_ESCAPE = /\\u0000|\\ud[89a-f]/i

/**
 * A value serialized as JSON that `jsonb` accepts (see {@link storableValue}); `undefined` is
 * `null`. Serialized once and cleaned only when the text shows something to clean (the common
 * case costs one `JSON.stringify` and one scan instead of a deep copy).
 */
export function storableJson(value: unknown): string {
  const text = JSON.stringify(value ?? null)
  return UNSTORABLE_ESCAPE.test(text) ? JSON.stringify(storableValue(value ?? null)) : text
}

/** A plain JSON object (not an array, not null). */
export const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

/**
 * A `jsonb` column as raw SQL answers it: parsed on PostgreSQL (`pg`), sometimes text elsewhere
 * (PGlite, `json` columns, values built in SQL); text is parsed here.
 */
export const jsonValueOf = (value: unknown): unknown => (typeof value === 'string' ? JSON.parse(value) : value)

/** A stored JSON object column (`metadata`) as a record; anything else is `{}`. */
export function jsonRecordOf(value: unknown): Record<string, unknown> {
  const parsed = jsonValueOf(value)
  return isRecord(parsed) ? parsed : {}
}

/** Bytes of a value serialized as JSON. */
export const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value), 'utf8')

/** A required display name: 1..max characters, not only white space. */
export const name = (max = 255) => text(max).refine((value) => value.trim().length > 0, 'must not be blank')

/** ISO 8601 in UTC with a `Z` suffix (docs/api/conventions.md). */
export const timestamp = () => z.iso.datetime()
/**
 * A UTC instant as PostgreSQL writes it in JSON (`2026-01-01T10:00:00.123456+00:00`): the form
 * the agent and list reads answer by the dozen, which {@link iso} turns into wire text directly.
 */
const PG_JSON_UTC = /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d{1,6}))?\+00:00$/

/**
 * Formats a stored instant for the wire. PostgreSQL's JSON form in UTC is rewritten as text
 * (the fraction cut to milliseconds, as parsing it into a Date does) without parsing it: the
 * same answer as the Date round trip, for a fraction of its cost.
 */
export const iso = (value: Date | string): string => {
  const json = typeof value === 'string' ? PG_JSON_UTC.exec(value) : null
  if (json) return `${json[1]}.${json[2] === undefined ? '000' : `${json[2]}00`.slice(0, 3)}Z`
  return toDate(value).toISOString()
}
/** Formats a nullable stored instant for the wire. */
export const isoOrNull = (value: Date | string | null | undefined): string | null => (value ? iso(value) : null)

/** `{data: T}`: the envelope of a single resource. */
export const envelope = <T extends z.ZodType>(item: T) => z.object({ data: item })

/**
 * Query of every list: `page` from 1, `per_page` 1..100 (default 15). A list query whose fields
 * are all optional ends in `.prefault({})`, so a tRPC client may call it with no input at all
 * (`trpc.agents.list.query()`): a missing input is parsed as `{}` and every default applies. REST
 * always has an object (the query string), and trpc-to-openapi documents the inner object.
 */
export const pageQuery = {
  page: z.number().int().min(1).max(1_000_000).default(1),
  per_page: z.number().int().min(1).max(100).default(15),
}

/** `sort` of a list: one of the columns, `-` for descending. */
export const sortParam = <const T extends readonly [string, ...string[]]>(columns: T, fallback: T[number]) =>
  z.enum(columns).default(fallback as never)

/** Turns `name` / `-name` into a column and a direction. */
export function sortOf(sort: string): { column: string; direction: 'asc' | 'desc' } {
  return sort.startsWith('-') ? { column: sort.slice(1), direction: 'desc' } : { column: sort, direction: 'asc' }
}

/** `with`: comma-separated relations to embed; an unknown one is a 400 naming `with`. */
export const withParam = <const T extends readonly [string, ...string[]]>(relations: T) =>
  z
    .string()
    .max(500)
    .transform((value) => value.split(',').map((part) => part.trim()).filter(Boolean))
    .pipe(z.array(z.enum(relations)))

const Links = z.object({
  first: z.string(),
  last: z.string(),
  prev: z.string().nullable(),
  next: z.string().nullable(),
})
const Meta = z.object({
  current_page: z.number().int(),
  from: z.number().int().nullable(),
  last_page: z.number().int(),
  path: z.string(),
  per_page: z.number().int(),
  to: z.number().int().nullable(),
  total: z.number().int(),
})

/** The Laravel paginator shape: `{data, links, meta}` (docs/api/conventions.md). */
export const paginated = <T extends z.ZodType>(item: T) => z.object({ data: z.array(item), links: Links, meta: Meta })

/** A page as the paginator shape; `path` is the list's absolute URL without a query. */
export function page<T>(
  items: T[],
  options: { total: number; page: number; perPage: number; path: string; query?: Record<string, string | undefined> },
) {
  const lastPage = Math.max(1, Math.ceil(options.total / options.perPage))
  const url = (n: number) => {
    const params = new URLSearchParams()
    for (const [key, value] of Object.entries(options.query ?? {})) if (value !== undefined) params.set(key, value)
    params.set('page', String(n))
    params.set('per_page', String(options.perPage))
    return `${options.path}?${params.toString()}`
  }
  const from = items.length ? (options.page - 1) * options.perPage + 1 : null
  return {
    data: items,
    links: {
      first: url(1),
      last: url(lastPage),
      prev: options.page > 1 ? url(Math.min(options.page - 1, lastPage)) : null,
      next: options.page < lastPage ? url(options.page + 1) : null,
    },
    meta: {
      current_page: options.page,
      from,
      last_page: lastPage,
      path: options.path,
      per_page: options.perPage,
      to: from === null ? null : from + items.length - 1,
      total: options.total,
    },
  }
}
