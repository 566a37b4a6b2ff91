/**
 * The OpenAPI document as the contract of every REST answer the tests receive
 * (docs/api/conventions.md, "The OpenAPI document"): the HTTP helpers (./app.ts `httpClient`,
 * ./media.ts, ./sse.ts) hand each answer under /api/v1 and /v1 to {@link checkAnswer}, which
 * throws, failing the calling test, when the operation the request reached does not declare the
 * answer's status, or the JSON body does not validate against the schema declared for it (ajv,
 * JSON Schema 2020-12 as OpenAPI 3.1 uses). Each operation answered is recorded (./contract-hits.ts),
 * and at the end of a run of every test file ./global-setup.ts checks that the tests reached every
 * operation of the document.
 */
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js'
import formats from 'ajv-formats'
import { openApiDocument } from '../../src/http/openapi-document.ts'
import { normalizePath, patternOf, uuidParams } from '../../src/http/rest-routes.ts'
import { hits } from './contract-hits.ts'

const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const

interface Response {
  content?: Record<string, { schema?: unknown }>
}
interface Template {
  method: string
  template: string
  pattern: RegExp
  /** Literal segments: where templates overlap (`/agents/leaderboard`, `/agents/{agent_uuid}`), the most literal wins. */
  literals: number
  responses: Record<string, Response>
}

/** The document's operations and one ajv over it, built on first use: once per test process. */
let state: { templates: Template[]; ajv: Ajv2020; validators: Map<string, ValidateFunction> } | undefined

/** The base URL of the document's servers plays no part in its paths or schemas. */
function contract(): NonNullable<typeof state> {
  if (state) return state
  const doc = openApiDocument('http://127.0.0.1')
  const templates: Template[] = []
  for (const [template, item] of Object.entries(doc.paths ?? {})) {
    for (const method of METHODS) {
      const op = item[method]
      if (!op) continue
      templates.push({
        method: method.toUpperCase(),
        template,
        // As the REST surface routes: a word where a uuid belongs reaches no operation.
        pattern: patternOf(template, uuidParams(op)),
        literals: template.split('/').filter((segment) => segment && !segment.startsWith('{')).length,
        responses: JSON.parse(JSON.stringify(op.responses ?? {})),
      })
    }
  }
  const ajv = new Ajv2020({ strict: false, allErrors: true })
  // ajv-formats is CommonJS: its plugin is the module's `default` under Node's ESM import.
  formats.default(ajv)
  // The document under one id: a response schema is compiled by its pointer, and its
  // `#/components/...` references resolve in the same document (each compiled once per process).
  ajv.addSchema({ $id: 'openapi.json', paths: doc.paths, components: doc.components })
  state = { templates, ajv, validators: new Map() }
  return state
}

/** The operation a request reaches, or none (the REST surface's 404 or 405 of a path, which no operation declares). */
function operationOf(method: string, pathname: string): Template | undefined {
  const normalized = normalizePath(pathname)
  const matches = contract().templates.filter((op) => op.method === method && op.pattern.test(normalized))
  return matches.sort((a, b) => b.literals - a.literals)[0]
}

/** Statuses of a request line or headers the server could not read: no operation is reached. */
const BEFORE_ROUTING = new Set([408, 431])

/** Whether the answer is one of the REST surface (the paths the document describes). */
const isRest = (pathname: string) => pathname.startsWith('/api/v1/') || pathname.startsWith('/v1/')

/**
 * Checks one REST answer against the document (see the file comment); other paths are not
 * checked. An answer no operation gives (a path or method the surface does not have) must still
 * carry the one error body.
 * @param body the JSON body, or the text when it is not JSON, or null when empty.
 * @throws Error naming the operation, the status and the validation errors.
 */
export function checkAnswer(method: string, url: string, status: number, contentType: string | null, body: unknown): void {
  const pathname = new URL(url, 'http://localhost').pathname
  if (method === 'HEAD' || !isRest(pathname)) return
  // Node's HTTP parser answers these before there is a request to route (src/http/errors.ts, handleClientError).
  const op = BEFORE_ROUTING.has(status) ? undefined : operationOf(method, pathname)
  if (!op) {
    if (status >= 400) validateJson(`${method} ${pathname}`, status, contentType, body, '#/components/schemas/Error')
    return
  }
  const name = `${method} ${op.template}`
  // `default`: an answer whose status the operation leaves to its caller (a webhook's respond node).
  const declared = op.responses[String(status)] ?? op.responses.default
  if (!declared)
    throw new Error(`The OpenAPI document does not declare ${status} for ${name}; the answer was ${JSON.stringify(body).slice(0, 500)}`)
  hits.add(name)
  if (!declared.content) {
    if (status === 204 && body !== null) throw new Error(`${name} answered 204 with a body: ${JSON.stringify(body).slice(0, 500)}`)
    return
  }
  // Other content (a file, an event stream) has no schema to check; an operation that declares
  // both (a run answered as JSON or as its events) is checked by the type the answer came as.
  if (!declared.content['application/json']) return
  const media = contentType?.split(';')[0].trim().toLowerCase()
  if (media && media !== 'application/json' && declared.content[media]) return
  const template = op.template.replaceAll('~', '~0').replaceAll('/', '~1')
  validateJson(
    name,
    status,
    contentType,
    body,
    `#/paths/${template}/${method.toLowerCase()}/responses/${status}/content/application~1json/schema`,
  )
}

/** Validates a JSON answer against the schema at `pointer` in the document. */
function validateJson(name: string, status: number, contentType: string | null, body: unknown, pointer: string): void {
  if (!contentType?.startsWith('application/json')) {
    throw new Error(`${name} ${status} declares application/json; the answer came as ${contentType ?? 'no Content-Type'}`)
  }
  const { ajv, validators } = contract()
  let validate = validators.get(pointer)
  if (!validate) {
    validate = ajv.compile({ $ref: `openapi.json${pointer}` })
    validators.set(pointer, validate)
  }
  if (!validate(body)) {
    throw new Error(
      `${name} ${status} does not validate against the OpenAPI document: ${ajv.errorsText(validate.errors)}\n${JSON.stringify(body).slice(0, 2000)}`,
    )
  }
}
