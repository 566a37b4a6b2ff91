/**
 * Renders a prompt's `content` with the values of its declared inputs (`metadata.input`; docs/api/resources.md, "Agents": Mustache `{{key}}` placeholders, inputs checked before any
 * model call, a 400 naming the input).
 *
 * Checks, in this order; the first failure throws `ValidationError` with the path `input.<key>`
 * (`input` when `values` is not an object):
 * 1. `values` is a plain object;
 * 2. every key of `values` is a declared input;
 * 3. for each declared input, in declaration order: a required input is present and non-empty;
 *    a given value has its type's shape:
 *    - `text`, `textarea`: a string of at most 100,000 characters;
 *    - `number`: a finite JSON number;
 *    - `boolean`: `true` or `false`;
 *    - `date`: `YYYY-MM-DD`, a real calendar date (`2025-02-29` is refused);
 *    - `select`: one of `options`;
 *    - `multiselect`: a list of `options` without repeats.
 *
 * Empty means `undefined`, `null`, a blank string or an empty list. An optional input may be
 * empty (or left out): it renders as nothing and `{{#key}}…{{/key}}` sections skip it. A
 * `false` or `0` is a value, not empty.
 *
 * Rendering (the `mustache` package): `{{key}}` is the value as text: numbers as JavaScript
 * writes them, booleans `true`/`false`, a multiselect as a comma-separated list (`a, b`); a
 * multiselect also iterates in `{{#key}}{{.}}{{/key}}`. Placeholders of undeclared names render
 * as nothing. Values are inserted once and never parsed as templates.
 *
 * **No HTML escaping.** Mustache HTML-escapes `{{key}}` by default, which protects HTML pages.
 * This output is a message to a language model, not a page: escaping would only corrupt the
 * user's values (`a < b && "c"` would reach the model as `a &lt; b &amp;&amp; &quot;c&quot;`),
 * and it would not stop prompt injection, which no escaping can. Front ends that show the
 * rendered text escape it as they escape every message. So `{{key}}`, `{{{key}}}` and `{{&key}}`
 * all insert the value as it is.
 *
 * A `content` that is not a valid Mustache template (an unclosed section, an unclosed tag) is a
 * `ValidationError` on `content` ({@link checkPromptTemplate}).
 */
import Mustache from 'mustache'
import { ValidationError } from '../platform/errors.ts'
import type { TPromptInputField } from './prompt.schema.ts'

/** One declared input, as stored in a prompt's `metadata.input`. */
export type PromptInputDecl = TPromptInputField

/** Longest `text`/`textarea` value, in characters (UTF-16 code units, as everywhere in the API). */
export const PROMPT_TEXT_INPUT_MAX = 100_000
/** Options a "must be one of" message lists before it shortens the list. */
const OPTIONS_IN_MESSAGE = 10
/** Characters of templates kept parsed before the cache is emptied (bounds its memory). */
const TEMPLATE_CACHE_CHARS = 4_000_000

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/

/** A writer of our own: its template cache is bounded, the process-wide one is left alone. */
const writer = new Mustache.Writer()
let cachedChars = 0
const cached = new Set<string>()

/** Inserts values as they are (see the module comment); `String` renders the multiselect list. */
const asIs = (value: unknown): string => String(value)

/**
 * Prototype of every view: no Object.prototype names (`{{constructor}}` renders nothing), and
 * `{{.}}` at the top renders nothing instead of `[object Object]`.
 */
const VIEW_BASE: object = Object.freeze(Object.assign(Object.create(null), { toString: () => '' }))

/** Parses `content` once (cached); a syntax error is a ValidationError on `content`. */
function parse(content: string): void {
  if (cached.has(content)) return
  if (cachedChars + content.length > TEMPLATE_CACHE_CHARS) {
    writer.clearCache()
    cached.clear()
    cachedChars = 0
  }
  try {
    writer.parse(content)
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error)
    throw new ValidationError(['content'], `is not a valid Mustache template: ${reason}`)
  }
  cached.add(content)
  cachedChars += content.length
}

/** Throws `ValidationError(['content'], …)` unless `content` parses as a Mustache template. */
export function checkPromptTemplate(content: string): void {
  parse(content)
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false
  const proto: unknown = Object.getPrototypeOf(value)
  return proto === Object.prototype || proto === null
}

function isEmpty(value: unknown): boolean {
  return (
    value === undefined ||
    value === null ||
    (typeof value === 'string' && value.trim() === '') ||
    (Array.isArray(value) && value.length === 0)
  )
}

/** Whether `YYYY-MM-DD` names a day of the proleptic Gregorian calendar. */
function isCalendarDate(value: string): boolean {
  const match = DATE.exec(value)
  if (!match) return false
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])]
  if (month < 1 || month > 12 || day < 1) return false
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1]
  return day <= days
}

function oneOf(options: readonly string[]): string {
  const shown = options.slice(0, OPTIONS_IN_MESSAGE).map((option) => JSON.stringify(option))
  return `must be one of ${shown.join(', ')}${options.length > OPTIONS_IN_MESSAGE ? ', …' : ''}`
}

/** A list that renders as `a, b` in `{{key}}` and still iterates in sections. */
function commaList(items: string[]): string[] {
  const list = [...items]
  Object.defineProperty(list, 'toString', { value: () => list.join(', ') })
  return list
}

/** The value to render for one given input, or a ValidationError naming it. */
function checked(input: PromptInputDecl, value: unknown): unknown {
  const fail = (message: string) => new ValidationError(['input', input.key], `${input.label || input.key} ${message}`)
  const options = Array.isArray(input.options) ? input.options : []
  switch (input.type) {
    case 'text':
    case 'textarea':
      if (typeof value !== 'string') throw fail('must be a string')
      if (value.length > PROMPT_TEXT_INPUT_MAX) throw fail(`must be at most ${PROMPT_TEXT_INPUT_MAX.toLocaleString('en-US')} characters`)
      return value
    case 'number':
      if (typeof value !== 'number' || !Number.isFinite(value)) throw fail('must be a finite number')
      return value
    case 'boolean':
      if (typeof value !== 'boolean') throw fail('must be true or false')
      return value
    case 'date':
      if (typeof value !== 'string' || !isCalendarDate(value)) throw fail('must be a calendar date written YYYY-MM-DD')
      return value
    case 'select':
      if (typeof value !== 'string' || !options.includes(value)) throw fail(oneOf(options))
      return value
    case 'multiselect': {
      if (!Array.isArray(value)) throw fail('must be a list of options')
      const seen = new Set<string>()
      for (const item of value) {
        if (typeof item !== 'string' || !options.includes(item)) throw fail(`items ${oneOf(options)}`)
        if (seen.has(item)) throw fail(`must not repeat ${JSON.stringify(item)}`)
        seen.add(item)
      }
      return commaList([...seen])
    }
    default:
      throw fail(`has an unsupported type ${JSON.stringify(input.type)}`)
  }
}

/**
 * Validates `values` against the declared inputs, then renders `content` (module comment).
 * @throws ValidationError `input.<key>` (or `input`) for a bad value, `content` for a bad template.
 */
export function renderPrompt(content: string, inputs: readonly PromptInputDecl[], values: unknown): string {
  if (!isPlainObject(values)) throw new ValidationError(['input'], 'input must be an object of input values by key')
  const declared = new Map(inputs.map((input) => [input.key, input]))
  for (const key of Object.keys(values)) {
    if (!declared.has(key)) throw new ValidationError(['input', key], `${key} is not an input of this prompt`)
  }
  const view: Record<string, unknown> = Object.create(VIEW_BASE)
  for (const input of inputs) {
    const value = Object.hasOwn(values, input.key) ? values[input.key] : undefined
    if (isEmpty(value)) {
      if (input.required) throw new ValidationError(['input', input.key], `${input.label || input.key} is required`)
      continue
    }
    view[input.key] = checked(input, value)
  }
  parse(content)
  return writer.render(content, view, undefined, { escape: asIs })
}
