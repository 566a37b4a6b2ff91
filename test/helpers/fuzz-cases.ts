/**
 * The bad-input cases of one REST operation, generated from its OpenAPI description (see
 * test/helpers/fuzz.ts): credentials, another tenant's and missing resources, odd path and query
 * parameters, and for JSON bodies malformed text, wrong content types, wrong types, limits, odd
 * unicode, odd numbers and deep nesting.
 */
import { randomUUID } from 'node:crypto'
import { accepts, nested, primary, setAt, typesOf, withRaw, type FuzzCase, type JsonSchema, type Operation } from './fuzz.ts'

/** The resources and credentials the cases point at. */
export interface FuzzTargets {
  /** A valid basic token of the caller. */
  token: string
  /** Path parameter -> a real resource of the caller's (the batch must leave it unchanged). */
  own: Record<string, string>
  /** Path parameter -> another tenant's resource (always a 404). */
  foreign: Record<string, string>
  /** Credentials that must be refused with a 401 (headers replace the caller's). */
  badAuth: { label: string; headers: Record<string, string> }[]
  /** Operation id -> fields that make its sample body valid (an existing user to add, ...). */
  hints: Record<string, Record<string, unknown>>
  /** A fresh e-mail address, so sample sign-ups do not collide. */
  email: () => string
}

type Resolve = (schema: JsonSchema | undefined) => JsonSchema
type Path = (string | number)[]

/** Valid text that is still odd: direction marks, emoji, combining marks, 4-byte characters, ... */
const ODD_TEXT: Record<string, string> = {
  rtl: '\u202Eevil\u202C \u200Fשלום\u200F',
  emoji: '👩🏽‍💻🙂🇺🇦',
  combining: 'Z' + '\u0336\u0301\u0308'.repeat(20),
  astral: '𝕏𠜎𝄞',
  invisible: '\u200B\uFEFF\u2060\u00AD',
  separators: 'a\u2028b\u2029c',
  controls: '\u0001\u001F\u007F',
  nfd: 'e\u0301 vs \u00E9',
}

/** Text PostgreSQL cannot store: NUL and lone surrogates (sent as JSON escapes). */
const UNSTORABLE: Record<string, string> = {
  nul: 'a\u0000b',
  'lone high surrogate': '\uD800',
  'lone low surrogate': 'x\uDFFF',
  'reversed pair': '\uDC00\uD800',
}

const MALFORMED = [
  '{bad',
  '{"a":',
  '',
  '{"a":1,}',
  "{'a':1}",
  '{"a":1}}',
  '{"a":1}{"b":2}',
  'NaN',
  '{"a":undefined}',
  '{"a":"\u0000"}',
  '{"a":"\\x41"}',
  '{"a":"\\ud800"',
  '\u0000',
]
const NOT_OBJECTS = ['[]', '"x"', '1', 'null', 'true', '[{}]', '-0', '1e309']
const ONE_MIB = 1024 * 1024

/** A value the schema accepts, built from required fields only. */
function sample(schema: JsonSchema, resolve: Resolve, email: () => string): unknown {
  const s = primary(schema, resolve)
  if (s.const !== undefined) return s.const
  if (s.enum?.length) return s.enum.find((value) => value !== null)
  const types = typesOf(s, resolve)
  if (types.has('object') || s.properties) {
    const value: Record<string, unknown> = {}
    for (const key of s.required ?? []) value[key] = sample(s.properties?.[key] ?? {}, resolve, email)
    return value
  }
  if (types.has('array')) return Array.from({ length: s.minItems ?? 0 }, () => sample(s.items ?? {}, resolve, email))
  if (types.has('string')) {
    if (s.format === 'email') return email()
    if (s.format === 'uuid') return randomUUID()
    if (s.format === 'date-time') return new Date(Date.now() + 86_400_000).toISOString()
    if (s.format === 'date') return '2030-01-01'
    if (s.format === 'uri' || s.format === 'url') return 'https://example.com/'
    const pattern = s.pattern ? new RegExp(s.pattern) : null
    const fits = ['fuzz-value', 'fuzzvalue', 'Fuzz', '1', 'a'].map((c) => c.padEnd(s.minLength ?? 0, 'x').slice(0, s.maxLength ?? 1000))
    return fits.find((c) => !pattern || pattern.test(c)) ?? fits[0]
  }
  if (types.has('integer') || types.has('number')) return Math.min(Math.max(s.minimum ?? 1, 1), s.maximum ?? Infinity)
  if (types.has('boolean')) return false
  return null
}

/** Every property of a body schema, at any depth (array items as index 0, extra keys as `fuzz_extra`). */
function nodesOf(schema: JsonSchema, resolve: Resolve, path: Path = []): { path: Path; schema: JsonSchema }[] {
  if (path.length >= 5) return []
  // Inside a real union (a workflow node's `position`: `[x, y]` or `{x, y}`), a wrong value fails
  // every branch, so the issue names the union, not the member: bad values are tried on the union.
  const resolved = resolve(schema)
  if ([...(resolved.anyOf ?? []), ...(resolved.oneOf ?? [])].filter((branch) => resolve(branch).type !== 'null').length > 1) return []
  const s = primary(schema, resolve)
  const out: { path: Path; schema: JsonSchema }[] = []
  const visit = (child: JsonSchema, at: Path) => {
    out.push({ path: at, schema: child }, ...nodesOf(child, resolve, at))
  }
  for (const [key, child] of Object.entries(s.properties ?? {})) visit(child, [...path, key])
  if (typeof s.additionalProperties === 'object') visit(s.additionalProperties, [...path, 'fuzz_extra'])
  if (s.items) visit(s.items, [...path, 0])
  return out
}

const fill = (template: string, params: Record<string, string>) => template.replace(/\{(\w+)\}/g, (_, name: string) => params[name] ?? name)

/** The operation's path with the caller's own resources (a missing one where none is given). */
export function pathFor(op: Operation, own: Record<string, string>): string {
  return fill(op.path, Object.fromEntries(op.pathParams.map((p) => [p.name, own[p.input] ?? missingValue(p.schema) ?? 'fuzz'])))
}

/** A real-looking value of a path parameter that names nothing. */
function missingValue(schema: JsonSchema): string | undefined {
  if (schema.format === 'uuid') return randomUUID()
  if (schema.type === 'integer' || schema.type === 'number') return '2147483000'
  return undefined
}

/**
 * Odd path parameter values; `named`: a 400 must name the parameter. Dot segments, bad
 * percent-encoding (`%zz`, UTF-8 that does not decode) and over-long values are refused by the
 * host before any parameter exists, without `issues`.
 */
function oddPathValues(schema: JsonSchema): { value: string; named: boolean }[] {
  const named = [
    'not-a-uuid',
    '..%2F..',
    '%00',
    '%2500',
    'null',
    'undefined',
    '-1',
    '0',
    '%F0%9F%98%80',
    'x'.repeat(900),
    "1'%20OR%20'1'%3D'1",
    '%5C..%5C..',
    '%5C..',
  ]
  const unnamed = ['..', '.', '../..', '%2e%2e', '.%2E', '\\..\\..', '%ED%A0%80', '%FF', '%C3', '%zz', '%', 'x'.repeat(5000)]
  const values = [...named.map((value) => ({ value, named: true })), ...unnamed.map((value) => ({ value, named: false }))]
  if (schema.format === 'uuid') values.push({ value: `${randomUUID()}%00`, named: true }, { value: `${randomUUID()}x`, named: true })
  if (schema.type === 'integer' || schema.type === 'number') {
    for (const value of ['abc', '1.5', '1e309', 'Infinity', 'NaN', '18446744073709551616', '2147483648', '1%00', '-0.5'])
      values.push({ value, named: true })
  }
  return values
}

/** Odd query values of a parameter: invalid ones (`mayBeValid` false) must be a 400 naming it. */
function oddQueryValues(name: string, schema: JsonSchema, resolve: Resolve): { query: string; mayBeValid?: boolean }[] {
  const s = primary(schema, resolve)
  const types = typesOf(s, resolve)
  const q = (value: string) => `${name}=${value}`
  const out: { query: string; mayBeValid?: boolean }[] = [{ query: `${q('1')}&${q('2')}` }, { query: q('%00') }, { query: q('1%00') }]
  if (types.has('integer') || types.has('number')) {
    out.push({ query: q('abc') }, { query: q('1e309') }, { query: q('NaN') }, { query: q('9'.repeat(400)) }, { query: q('-1e309') })
    if (s.minimum !== undefined) out.push({ query: q(String(s.minimum - 1)) }, { query: q('-1') })
    if (s.maximum !== undefined) out.push({ query: q(String(s.maximum + 1)) })
    if (s.maximum !== undefined && s.maximum < 1e9) out.push({ query: q('1000000000') })
    if (s.maximum !== undefined && s.maximum < 1000) out.push({ query: q('1000') })
    if (types.has('integer')) out.push({ query: q('1.5') })
  } else if (s.enum) {
    out.push({ query: q('drop%20table') }, { query: q(encodeURIComponent("name'; drop table users;--")) }, { query: q('x'.repeat(5000)) })
    out.push({ query: q(encodeURIComponent('🙂')) }, { query: `${q(String(s.enum[0]))}&${q(String(s.enum[1] ?? s.enum[0]))}` })
  } else if (types.has('string')) {
    if (s.maxLength !== undefined) out.push({ query: q('x'.repeat(s.maxLength + 1)) })
    if ((s.maxLength ?? Infinity) < 8000) out.push({ query: q('x'.repeat(8000)) })
    if (name === 'with')
      out.push({ query: q('unknown') }, { query: q('user,unknown') }, { query: q('__proto__') }, { query: q(',,unknown,,') })
    for (const text of Object.values(ODD_TEXT)) out.push({ query: q(encodeURIComponent(text)), mayBeValid: true })
    for (const value of ['%ED%A0%80', '%FF', '%25', "'%20or%201%3D1%20--", '%5C']) out.push({ query: q(value), mayBeValid: true })
  }
  return out
}

/** The cases of one operation. */
export function casesFor(op: Operation, t: FuzzTargets, resolve: Resolve): FuzzCase[] {
  const cases: FuzzCase[] = []
  const own: Record<string, string> = {}
  for (const p of op.pathParams) own[p.name] = t.own[p.input] ?? missingValue(p.schema) ?? 'fuzz'
  const auth = { authorization: `Bearer ${t.token}` }
  const jsonHeaders = { ...auth, 'content-type': 'application/json' }
  const base = (): Record<string, unknown> => {
    const value = op.body ? sample(op.body, resolve, t.email) : {}
    return { ...(typeof value === 'object' && value !== null ? value : {}), ...t.hints[op.id] }
  }
  const urlOf = (params: Record<string, string> = own, query = '') => fill(op.path, params) + (query ? `?${query}` : '')
  /** The operation's valid request: own resources, a sample body. */
  const valid = (): Pick<FuzzCase, 'url' | 'headers' | 'body'> =>
    op.body ? { url: urlOf(), headers: jsonHeaders, body: JSON.stringify(base()) } : { url: urlOf(), headers: auth }
  const add = (label: string, c: Partial<FuzzCase>) =>
    cases.push({ label: `${op.method} ${op.path} ${label}`, method: op.method, ...valid(), ...c })

  // Credentials: the request is otherwise valid, so only the credentials can refuse it.
  if (op.protected) {
    for (const bad of t.badAuth) {
      add(`[auth: ${bad.label}]`, {
        headers: { ...(op.body ? { 'content-type': 'application/json' } : {}), ...bad.headers },
        status: [401],
      })
    }
  }
  add('[wrong service key]', { headers: { ...valid().headers, 'x-service-authorization': 'wrong-service-key-0123456789' }, status: [401] })
  add('[URL over the header limit]', { url: urlOf(own, `fuzz=${'x'.repeat(70_000)}`), status: [414, 431] })
  // Dot segments and backslashes around the real path: the request must not reach it.
  for (const prefix of ['/x/..', '/.', '/api/v1/x%2F..', '\\x\\..'])
    add(`[path prefixed ${prefix}]`, { url: prefix + urlOf(), status: [400, 404] })
  add('[path ending /..]', { url: `${urlOf()}/x/..`, status: [400, 404] })
  add('[unsupported method PATCH]', { method: op.method === 'PATCH' ? 'TRACE' : 'PATCH', status: [404, 405] })

  // Another tenant's resources and missing ones: 404, saying nothing about them.
  for (const p of op.pathParams) {
    if (t.foreign[p.input]) add(`[another tenant's ${p.name}]`, { url: urlOf({ ...own, [p.name]: t.foreign[p.input] }), status: [404] })
    const missing = missingValue(p.schema)
    if (missing) {
      add(`[missing ${p.name}]`, { url: urlOf({ ...own, [p.name]: missing }), status: [404] })
      // The path names a missing resource; the real one rides along in the query or the body.
      if (op.body)
        add(`[${p.name} shadowed in the body]`, {
          url: urlOf({ ...own, [p.name]: missing }),
          body: JSON.stringify({ ...base(), [p.input]: own[p.name] }),
          status: [400, 404],
        })
      else
        add(`[${p.name} shadowed in the query]`, {
          url: urlOf({ ...own, [p.name]: missing }, `${p.input}=${own[p.name]}`),
          status: [400, 404],
        })
    }
    // A word where a uuid belongs names no route (404), or another operation's path: a 405 with Allow
    // (`PUT large-language-models/{model}` with a slug, where only `GET` takes one).
    for (const odd of oddPathValues(p.schema)) {
      add(`[${p.name}=${odd.value.slice(0, 40)}]`, {
        url: urlOf({ ...own, [p.name]: odd.value }),
        status: [400, 404, 405, 414],
        ...(odd.named ? { field: [p.input] } : {}),
      })
    }
  }
  if (op.pathParams.length > 1 && op.pathParams.every((p) => t.foreign[p.input])) {
    add("[every path parameter another tenant's]", {
      url: urlOf(Object.fromEntries(op.pathParams.map((p) => [p.name, t.foreign[p.input]]))),
      status: [404],
    })
  }

  if (!op.body) {
    // A GET without any parameter has no input to be strict about: extra query keys are ignored.
    const lenient = op.method === 'GET' && !op.pathParams.length && !op.queryParams.length
    add(
      '[unknown query parameter]',
      lenient
        ? { url: urlOf(own, 'fuzz_unknown=1'), mayBeValid: true }
        : { url: urlOf(own, 'fuzz_unknown=1'), status: [400], field: ['fuzz_unknown'] },
    )
    add(
      '[query constructor[prototype]]',
      lenient
        ? { url: urlOf(own, 'constructor[prototype][x]=1'), mayBeValid: true }
        : { url: urlOf(own, 'constructor[prototype][x]=1'), status: [400] },
    )
    if (op.method === 'GET') add('[query __proto__]', { url: urlOf(own, '__proto__=1&__proto__[x]=1'), mayBeValid: true })
    if (op.method === 'DELETE') add('[malformed JSON body]', { headers: jsonHeaders, body: '{bad', status: [400] })
    for (const p of op.queryParams) {
      for (const odd of oddQueryValues(p.name, p.schema, resolve)) {
        if (odd.mayBeValid && op.method !== 'GET') continue
        add(
          `[?${odd.query.slice(0, 60)}]`,
          odd.mayBeValid
            ? { url: urlOf(own, odd.query), mayBeValid: true }
            : { url: urlOf(own, odd.query), status: [400], field: [p.name] },
        )
      }
    }
    return cases
  }

  // JSON bodies: everything before validation.
  const validBody = JSON.stringify(base())
  for (const text of MALFORMED) add(`[malformed ${JSON.stringify(text)}]`, { body: text, status: [400] })
  for (const text of NOT_OBJECTS) add(`[not an object: ${text}]`, { body: text, status: [400] })
  for (const text of ['{"__proto__":{"x":1}}', '{"constructor":{"prototype":{"x":1}}}'])
    add(`[poisoning ${text}]`, { body: text, status: [400] })
  const multipart = `--fuzz\r\nContent-Disposition: form-data; name="fuzz"\r\n\r\nx\r\n--fuzz--\r\n`
  for (const [type, body] of [
    ['text/plain', validBody],
    ['text/plain; charset=utf-8', validBody],
    ['application/x-www-form-urlencoded', 'fuzz=1&name=x'],
    ['multipart/form-data; boundary=fuzz', multipart],
    ['application/xml', '<fuzz/>'],
    ['application/json-patch+json', validBody],
    ['application/jsonx', validBody],
    ['application/vnd.api+json', validBody],
  ]) {
    add(`[Content-Type ${type}]`, { headers: { ...auth, 'content-type': type }, body, status: [415] })
  }
  add('[body without Content-Type]', { headers: auth, body: validBody, status: [415] })
  add('[body over 1 MiB]', { body: JSON.stringify({ ...base(), fuzz: 'x'.repeat(ONE_MIB + 10) }), status: [413] })
  add('[body over 1 MiB as text/plain]', {
    headers: { ...auth, 'content-type': 'text/plain' },
    body: 'x'.repeat(ONE_MIB + 10),
    status: [413, 415],
  })
  add('[unknown field]', { body: JSON.stringify({ ...base(), fuzz_unknown: 1 }), status: [400], field: ['fuzz_unknown'] })
  add('[look-alike field (Cyrillic a)]', { body: JSON.stringify({ ...base(), nаme: 'x' }), status: [400], field: ['nаme'] })
  add('[empty field name]', { body: JSON.stringify({ ...base(), '': 1 }), status: [400], field: [''] })
  add('[20,000 unknown fields]', {
    body: JSON.stringify({ ...base(), ...Object.fromEntries(Array.from({ length: 20_000 }, (_, i) => [`k${i}`, i])) }),
    status: [400],
  })
  add('[unknown field nested 5000 deep]', { body: `{"fuzz":${nested(5000, 'object')}}`, status: [400] })
  add('[array nested 400,000 deep]', { body: '['.repeat(400_000) + ']'.repeat(400_000), status: [400] })

  // Every property: wrong types, broken limits, unstorable and odd text, odd numbers, nesting.
  for (const node of nodesOf(op.body, resolve)) {
    const field = node.path
    const name = field.join('.')
    const s = primary(node.schema, resolve)
    const types = typesOf(node.schema, resolve)
    if (!types.size) continue
    const set = (value: unknown) => JSON.stringify(setAt(base(), field, value))
    const invalid = (label: string, body: string | Buffer) => add(`[${name}: ${label}]`, { body, status: [400], field })
    const maybe = (label: string, body: string | Buffer) => add(`[${name}: ${label}]`, { body, mayBeValid: true })
    const top = field.length === 1

    const wrongs: unknown[] = [12345, 'fuzz', true, [], {}, null]
    if (types.has('boolean') && !types.has('string')) wrongs.push('true', 'false')
    if ((types.has('number') || types.has('integer')) && !types.has('string')) wrongs.push('1', '0')
    for (const value of wrongs) if (!accepts(types, value)) invalid(`wrong type ${JSON.stringify(value)}`, set(value))
    if (top && typeof field[0] === 'string') {
      // A duplicate key: JSON.parse keeps the last one, which is wrong.
      const wrong = wrongs.find((value) => !accepts(types, value))
      const body = JSON.stringify(setAt(base(), field, sample(node.schema, resolve, t.email)))
      if (wrong !== undefined)
        invalid(
          'duplicate key, the last one wrong',
          `${body.slice(0, -1)}${body.length > 2 ? ',' : ''}${JSON.stringify(field[0])}:${JSON.stringify(wrong)}}`,
        )
    }
    invalid('nested 20 deep', withRaw(base(), field, nested(20, 'object')))
    add(`[${name}: nested 5000 deep]`, { body: withRaw(base(), field, nested(5000, 'array')), status: [400] })

    if (types.has('string')) {
      const secret = /password|secret/i.test(name)
      const constrained = Boolean(s.enum || s.format || s.pattern)
      if (s.enum) invalid('not one of the enum', set('fuzz-not-in-enum'))
      if (s.format || s.pattern) invalid(`not a ${s.format ?? 'pattern match'}`, set('not valid %'))
      // A bound near the body limit (a knowledge text of 1 MiB) may be met by the body limit first: 413.
      if (s.maxLength !== undefined && s.maxLength + 1 >= ONE_MIB - 1024)
        add(`[${name}: ${s.maxLength + 1} characters]`, { body: set('x'.repeat(s.maxLength + 1)), status: [400, 413], field })
      else if (s.maxLength !== undefined) invalid(`${s.maxLength + 1} characters`, set('x'.repeat(s.maxLength + 1)))
      if (s.maxLength !== undefined) maybe(`${s.maxLength} four-byte characters`, set('😀'.repeat(s.maxLength)))
      if (s.minLength) invalid('empty', set(''))
      if ((s.maxLength !== undefined && s.maxLength < 1_000_000) || constrained) invalid('1,000,000 characters', set('x'.repeat(1_000_000)))
      else maybe('1,000,000 characters', set('x'.repeat(1_000_000)))
      if (top && (s.maxLength !== undefined || constrained)) invalid('250,000 four-byte characters', set('😀'.repeat(250_000)))
      for (const [label, text] of Object.entries(UNSTORABLE)) (secret && !constrained ? maybe : invalid)(label, set(text))
      for (const [label, text] of Object.entries(ODD_TEXT)) maybe(label, set(text))
      if (top) {
        const mark = `fuzz${randomUUID()}`
        const [before, after] = JSON.stringify(setAt(base(), field, mark)).split(mark)
        maybe(
          'invalid UTF-8 bytes',
          Buffer.concat([Buffer.from(before), Buffer.from([0xff, 0xfe, 0xed, 0xa0, 0x80, 0xc3]), Buffer.from(after)]),
        )
      }
    }
    if (types.has('number') || types.has('integer')) {
      const integer = types.has('integer') && !types.has('number')
      invalid('1e309', withRaw(base(), field, '1e309'))
      invalid('-1e309', withRaw(base(), field, '-1e309'))
      if (s.minimum !== undefined) invalid(`${s.minimum - 1}`, set(s.minimum - 1))
      if (s.maximum !== undefined) invalid(`${s.maximum + 1}`, set(s.maximum + 1))
      if (integer) invalid('1.5', set(1.5))
      const big = integer || (s.maximum !== undefined && s.maximum < 2 ** 64)
      ;(big ? invalid : maybe)('2**64', withRaw(base(), field, '18446744073709551616'))
      const positive = (s.minimum !== undefined && s.minimum > 0) || (s.exclusiveMinimum !== undefined && s.exclusiveMinimum >= 0)
      ;(positive ? invalid : maybe)('-0', withRaw(base(), field, '-0'))
      ;(positive ? invalid : maybe)('1e-400', withRaw(base(), field, '1e-400'))
      for (const raw of ['NaN', 'Infinity', '0x10', '01', '+1', '.5'])
        add(`[${name}: ${raw}]`, { body: withRaw(base(), field, raw), status: [400] })
    }
    if (types.has('boolean'))
      for (const raw of ['True', 'tru']) add(`[${name}: ${raw}]`, { body: withRaw(base(), field, raw), status: [400] })
    if (types.has('array')) {
      if (s.maxItems !== undefined)
        invalid(`${s.maxItems + 1} items`, set(Array.from({ length: s.maxItems + 1 }, () => sample(s.items ?? {}, resolve, t.email))))
      if (s.minItems) invalid('no items', set([]))
    }
  }
  return cases
}
