/**
 * A node type's parameter schema (JSON Schema from `GET /api/v1/workflow-node-types`) made into
 * what the parameter form shows. The catalogue's schemas say exactly what the service accepts,
 * which is not always what a form can draw: most fields also take an expression (`"=..."`, an
 * `anyOf` with a `{type: string, pattern: "^="}` branch), some take any JSON value (an HTTP
 * body, an if's condition), maps take any keys. So:
 * - an expression-or-string field becomes a plain text field (an expression is text too);
 * - a field of any JSON, a map, or an expression-or-something-else field is one JSON text
 *   area (the `json` field of ./ParameterForm.tsx) that takes JSON or an `=expression`, and is
 *   still checked against its own schema;
 * - every field gets a title from its name ("timeout_ms" is "Timeout (ms)").
 */
import type { RJSFSchema, UiSchema } from '@rjsf/utils'

type Schema = Record<string, unknown>

/** The uiSchema `ui:field` name of the JSON text field. */
export const JSON_FIELD = 'json'

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

function part(schema: Schema, title: string | undefined): FormPart {
  if (Array.isArray(schema.anyOf)) {
    const rest = schema.anyOf.filter((branch) => !isExpressionBranch(branch))
    const expression = rest.length < schema.anyOf.length
    const [only] = rest
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
      const made = part(isObject(child) ? child : {}, humanize(key))
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
