/**
 * A node type's parameter schema (JSON Schema from `GET /api/v1/workflow-node-types`) made into
 * what the parameter form shows. The catalogue's schemas say exactly what the service accepts,
 * which is not always what a form can draw: most fields also take an expression (`"=..."`, an
 * `anyOf` with a `{type: string, pattern: "^="}` branch), some take any JSON value (an HTTP
 * body, an if's condition), maps take any keys. So:
 * - an expression-or-string field becomes a plain text field (an expression is text too);
 * - a map (any keys: Set's values, headers, a prompt's input), or a map-or-expression field, is a
 *   list of key/value rows (the `keyValue` field of ./ParameterForm.tsx), each value typed as the
 *   map's value schema allows (text, number, yes/no, JSON), the whole an expression where allowed;
 * - an account, agent or prompt named by uuid (`account_uuid`, `agent_uuid`, `prompt_uuid`) is
 *   picked by name from its list (the `resource` field); an account only of the provider the
 *   schema names in `x-provider` (a slug or uuid), when it names one;
 * - a field of any JSON, or an expression-or-something-else field, is one JSON text area (the
 *   `json` field) that takes JSON or an `=expression`, and is still checked against its own schema;
 * - every field gets a title from its name ("timeout_ms" is "Timeout (ms)").
 */
import type { RJSFSchema, UiSchema } from '@rjsf/utils'

type Schema = Record<string, unknown>

/** The uiSchema `ui:field` name of the JSON text field. */
export const JSON_FIELD = 'json'
/** The uiSchema `ui:field` name of the key/value rows of a map. */
export const KEY_VALUE_FIELD = 'keyValue'
/** The uiSchema `ui:field` name of a record picked by name (an account, an agent, a prompt). */
export const RESOURCE_FIELD = 'resource'

/** What a map's value may be, as a row's kind: text (an expression too), a number, yes/no, any JSON. */
export type ValueKind = 'text' | 'number' | 'boolean' | 'json'
/** The records a uuid parameter can name, by the parameter's name. */
export type Resource = 'accounts' | 'agents' | 'prompts'
const RESOURCES: Record<string, Resource> = { account_uuid: 'accounts', agent_uuid: 'agents', prompt_uuid: 'prompts' }

const isObject = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value)

/** The branch of an expression-capable field that holds the expression. */
const isExpressionBranch = (schema: unknown) => isObject(schema) && schema.type === 'string' && schema.pattern === '^='

const WORDS: Record<string, string> = { url: 'URL', uuid: 'UUID', http: 'HTTP', id: 'ID', ms: '(ms)' }

/** `timeout_ms` → "Timeout (ms)", `account_uuid` → "Account UUID". */
export function humanize(key: string): string {
  const words = key.split(/[_\s]+/).filter(Boolean).map((word) => WORDS[word.toLowerCase()] ?? word)
  const text = words.join(' ')
  return text.charAt(0).toUpperCase() + text.slice(1)
}

/** Text ending with a full stop, so a hint can follow it. */
export const sentence = (text: string) => (/[.!?]$/.test(text.trim()) ? text.trim() : `${text.trim()}.`)

interface FormPart {
  schema: Schema
  ui: UiSchema
}

/** A field edited as JSON text, keeping `schema` for its checks. */
function jsonField(schema: Schema, title: string | undefined, expression: boolean): FormPart {
  const { $schema: _ignored, ...rest } = schema
  return {
    schema: title ? { ...rest, title } : rest,
    ui: { 'ui:field': JSON_FIELD, 'ui:fieldReplacesAnyOrOneOf': true, 'ui:options': { expression } },
  }
}

function describe(schema: Schema, title: string | undefined, expression: boolean): Schema {
  const description = typeof schema.description === 'string' ? schema.description : undefined
  const hint = expression ? 'Or an expression starting with =.' : undefined
  const text = [description && sentence(description), hint].filter(Boolean).join(' ')
  return { ...(title ? { title } : {}), ...(text ? { description: text } : {}) }
}

/** A JSON object of any keys (no named properties). */
const isMap = (schema: unknown): boolean =>
  isObject(schema) && schema.type === 'object' && !isObject(schema.properties) && schema.additionalProperties !== false

/** The kinds of value a map's value schema takes, from its types (any JSON when it names none). */
function valueKinds(schema: unknown): ValueKind[] {
  const kinds = new Set<ValueKind>()
  const visit = (branch: unknown) => {
    if (!isObject(branch) || Object.keys(branch).length === 0) return ['text', 'number', 'boolean', 'json'].forEach((kind) => kinds.add(kind as ValueKind))
    if (Array.isArray(branch.anyOf)) return branch.anyOf.forEach(visit)
    const type = branch.type
    if (type === 'string') kinds.add('text')
    else if (type === 'number' || type === 'integer') kinds.add('number')
    else if (type === 'boolean') kinds.add('boolean')
    else kinds.add('json')
  }
  visit(schema === true || schema === undefined ? {} : schema)
  return (['text', 'number', 'boolean', 'json'] as const).filter((kind) => kinds.has(kind))
}

/** A map edited as key/value rows, keeping `schema` for its checks. */
function keyValueField(schema: Schema, map: Schema, title: string | undefined, expression: boolean): FormPart {
  const { $schema: _ignored, ...rest } = schema
  return {
    schema: { ...rest, ...describe(schema, title, false) },
    ui: { 'ui:field': KEY_VALUE_FIELD, 'ui:fieldReplacesAnyOrOneOf': true, 'ui:options': { expression, kinds: valueKinds(map.additionalProperties) } },
  }
}

function part(schema: Schema, title: string | undefined, key?: string): FormPart {
  const resource = key ? RESOURCES[key] : undefined
  if (resource && schema.type === 'string') {
    const provider = typeof schema['x-provider'] === 'string' ? schema['x-provider'] : undefined
    return { schema: { ...schema, ...(title ? { title } : {}) }, ui: { 'ui:field': RESOURCE_FIELD, 'ui:options': { resource, provider } } }
  }
  if (isMap(schema)) return keyValueField(schema, schema, title, false)
  if (Array.isArray(schema.anyOf)) {
    const rest = schema.anyOf.filter((branch) => !isExpressionBranch(branch))
    const expression = rest.length < schema.anyOf.length
    const [only] = rest
    if (rest.length === 1 && isObject(only) && isMap(only)) return keyValueField(schema, only, title, expression)
    if (rest.length === 1 && isObject(only) && only.type === 'string' && !only.enum) {
      // An expression is text too; the branch's own pattern or format would refuse one.
      const kept = expression ? { minLength: only.minLength } : { minLength: only.minLength, maxLength: only.maxLength, pattern: only.pattern, format: only.format }
      const defined = Object.fromEntries(Object.entries(kept).filter(([, value]) => value !== undefined))
      return { schema: { type: 'string', ...defined, ...describe(schema, title, expression) }, ui: {} }
    }
    return jsonField(schema, title, expression)
  }
  const type = schema.type
  if (type === 'object') {
    if (!isObject(schema.properties)) return jsonField(schema, title, false)
    const properties: Schema = {}
    const ui: UiSchema = {}
    for (const [key, child] of Object.entries(schema.properties)) {
      const made = part(isObject(child) ? child : {}, humanize(key), key)
      properties[key] = made.schema
      if (Object.keys(made.ui).length) ui[key] = made.ui
    }
    const { $schema: _ignored, ...rest } = schema
    return { schema: { ...rest, ...(title ? { title } : {}), properties }, ui }
  }
  if (type === 'array') {
    const items = isObject(schema.items) ? part(schema.items, undefined) : { schema: {}, ui: { 'ui:field': JSON_FIELD } }
    return { schema: { ...schema, ...(title ? { title } : {}), items: items.schema }, ui: Object.keys(items.ui).length ? { items: items.ui } : {} }
  }
  if (typeof type === 'string' || Array.isArray(schema.enum) || 'const' in schema) return { schema: { ...schema, ...(title ? { title } : {}) }, ui: {} }
  // No type: any JSON value.
  return jsonField(schema, title, false)
}

/** The form's schema and uiSchema for a node type's `parameters` JSON Schema. */
export function parameterForm(parameters: Record<string, unknown>): { schema: RJSFSchema; uiSchema: UiSchema } {
  const made = part(isObject(parameters) ? parameters : {}, undefined)
  return {
    schema: made.schema as RJSFSchema,
    uiSchema: { ...made.ui, 'ui:submitButtonOptions': { norender: true } },
  }
}
