/**
 * A JSON Schema validator for the parameter forms that compiles nothing. rjsf's own validator
 * (@rjsf/validator-ajv8) builds each schema's check with `new Function`, which the console's
 * Content-Security-Policy (`script-src 'self'`, no 'unsafe-eval') refuses: every check would fail
 * with an EvalError. This one walks the schema instead. It knows the keywords the node type
 * catalogue's schemas use (zod's JSON Schema output, draft 2020-12) and the usual others; unknown
 * keywords and formats are ignored, so it errs on the side of letting a value through: the
 * service checks every saved graph anyway, and its issues are shown at the fields they name.
 */
import {
  createErrorHandler,
  toErrorSchema,
  unwrapErrorHandler,
  validationDataMerge,
  type CustomValidator,
  type ErrorTransformer,
  type FormContextType,
  type RJSFSchema,
  type RJSFValidationError,
  type UiSchema,
  type ValidationData,
  type ValidatorType,
} from '@rjsf/utils'

type Path = (string | number)[]

/** One failed keyword: where in the value, which keyword, and what went wrong (ajv's wording). */
export interface SchemaIssue {
  path: Path
  keyword: string
  message: string
}

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value)

function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true
  if (Array.isArray(a) && Array.isArray(b)) return a.length === b.length && a.every((item, i) => deepEqual(item, b[i]))
  if (isObject(a) && isObject(b)) {
    const keys = Object.keys(a)
    return keys.length === Object.keys(b).length && keys.every((key) => key in b && deepEqual(a[key], b[key]))
  }
  return false
}

const patterns = new Map<string, RegExp | null>()
/** A schema's `pattern` as a RegExp (the constructor parses; it does not evaluate code), or null when it does not parse. */
function patternOf(source: string): RegExp | null {
  if (!patterns.has(source)) {
    try {
      patterns.set(source, new RegExp(source, 'u'))
    } catch {
      patterns.set(source, null)
    }
  }
  return patterns.get(source) ?? null
}

const FORMATS: Record<string, (value: string) => boolean> = {
  uuid: (value) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(value),
  email: (value) => /^[^\s@]+@[^\s@]+$/.test(value),
  uri: (value) => URL.canParse(value),
  'date-time': (value) => !Number.isNaN(Date.parse(value)),
}

function typeMatches(type: string, value: unknown): boolean {
  switch (type) {
    case 'null':
      return value === null
    case 'boolean':
      return typeof value === 'boolean'
    case 'string':
      return typeof value === 'string'
    case 'number':
      return typeof value === 'number' && Number.isFinite(value)
    case 'integer':
      return typeof value === 'number' && Number.isInteger(value)
    case 'array':
      return Array.isArray(value)
    case 'object':
      return isObject(value)
    default:
      return true
  }
}

/** A `$ref` inside the root schema (`#/$defs/x`), or undefined. */
function resolveRef(ref: string, root: unknown): unknown {
  if (!ref.startsWith('#')) return undefined
  let target: unknown = root
  for (const raw of ref.slice(1).split('/').filter(Boolean)) {
    const key = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~')
    target = isObject(target) ? target[key] : Array.isArray(target) ? target[Number(key)] : undefined
  }
  return target
}

const length = (text: string) => [...text].length

/** The issues of `value` against `schema` (`root` resolves `$ref`s), appended to `out`. */
function check(schema: unknown, value: unknown, path: Path, root: unknown, out: SchemaIssue[], depth = 0): void {
  if (schema === true || schema === undefined || depth > 64) return
  if (schema === false) {
    out.push({ path, keyword: 'false schema', message: 'boolean schema is false' })
    return
  }
  if (!isObject(schema)) return
  const issue = (keyword: string, message: string, at: Path = path) => out.push({ path: at, keyword, message })
  if (typeof schema.$ref === 'string') check(resolveRef(schema.$ref, root), value, path, root, out, depth + 1)
  if (Array.isArray(schema.allOf)) for (const part of schema.allOf) check(part, value, path, root, out, depth + 1)
  if (Array.isArray(schema.anyOf)) checkAlternatives(schema.anyOf, 'anyOf', value, path, root, out, depth)
  if (Array.isArray(schema.oneOf)) checkAlternatives(schema.oneOf, 'oneOf', value, path, root, out, depth)
  if (schema.not !== undefined && valid(schema.not, value, root)) issue('not', 'must NOT be valid')
  if (schema.if !== undefined) {
    const branch = valid(schema.if, value, root) ? schema.then : schema.else
    if (branch !== undefined) check(branch, value, path, root, out, depth + 1)
  }
  const types = typeof schema.type === 'string' ? [schema.type] : Array.isArray(schema.type) ? schema.type.map(String) : []
  if (types.length && !types.some((type) => typeMatches(type, value))) {
    issue('type', `must be ${types.join(',')}`)
    return
  }
  if (Array.isArray(schema.enum) && !schema.enum.some((option) => deepEqual(option, value))) {
    issue('enum', 'must be equal to one of the allowed values')
  }
  if ('const' in schema && !deepEqual(schema.const, value)) issue('const', 'must be equal to constant')
  if (typeof value === 'string') checkString(schema, value, issue)
  if (typeof value === 'number') checkNumber(schema, value, issue)
  if (Array.isArray(value)) checkArray(schema, value, path, root, out, depth, issue)
  if (isObject(value)) checkObject(schema, value, path, root, out, depth, issue)
}

type Report = (keyword: string, message: string, at?: Path) => void

function checkString(schema: Record<string, unknown>, value: string, issue: Report): void {
  if (typeof schema.minLength === 'number' && length(value) < schema.minLength) {
    issue('minLength', `must NOT have fewer than ${schema.minLength} characters`)
  }
  if (typeof schema.maxLength === 'number' && length(value) > schema.maxLength) {
    issue('maxLength', `must NOT have more than ${schema.maxLength} characters`)
  }
  if (typeof schema.pattern === 'string' && patternOf(schema.pattern)?.test(value) === false) {
    issue('pattern', `must match pattern "${schema.pattern}"`)
  }
  if (typeof schema.format === 'string' && FORMATS[schema.format]?.(value) === false) issue('format', `must match format "${schema.format}"`)
}

function checkNumber(schema: Record<string, unknown>, value: number, issue: Report): void {
  if (typeof schema.minimum === 'number' && value < schema.minimum) issue('minimum', `must be >= ${schema.minimum}`)
  if (typeof schema.maximum === 'number' && value > schema.maximum) issue('maximum', `must be <= ${schema.maximum}`)
  if (typeof schema.exclusiveMinimum === 'number' && value <= schema.exclusiveMinimum) issue('exclusiveMinimum', `must be > ${schema.exclusiveMinimum}`)
  if (typeof schema.exclusiveMaximum === 'number' && value >= schema.exclusiveMaximum) issue('exclusiveMaximum', `must be < ${schema.exclusiveMaximum}`)
  if (typeof schema.multipleOf === 'number' && schema.multipleOf > 0) {
    const quotient = value / schema.multipleOf
    if (Math.abs(quotient - Math.round(quotient)) > 1e-9) issue('multipleOf', `must be multiple of ${schema.multipleOf}`)
  }
}

function checkArray(schema: Record<string, unknown>, value: unknown[], path: Path, root: unknown, out: SchemaIssue[], depth: number, issue: Report): void {
  if (typeof schema.minItems === 'number' && value.length < schema.minItems) issue('minItems', `must NOT have fewer than ${schema.minItems} items`)
  if (typeof schema.maxItems === 'number' && value.length > schema.maxItems) issue('maxItems', `must NOT have more than ${schema.maxItems} items`)
  if (schema.uniqueItems === true && value.some((item, i) => value.findIndex((other) => deepEqual(other, item)) !== i)) {
    issue('uniqueItems', 'must NOT have duplicate items')
  }
  const prefix = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : []
  value.forEach((item, i) => {
    const itemSchema = i < prefix.length ? prefix[i] : Array.isArray(schema.items) ? schema.additionalItems : schema.items
    check(itemSchema, item, [...path, i], root, out, depth + 1)
  })
  if (schema.contains !== undefined && !value.some((item) => valid(schema.contains, item, root))) issue('contains', 'must contain at least 1 valid item')
}

function checkObject(
  schema: Record<string, unknown>,
  value: Record<string, unknown>,
  path: Path,
  root: unknown,
  out: SchemaIssue[],
  depth: number,
  issue: Report,
): void {
  const properties = isObject(schema.properties) ? schema.properties : {}
  const patternProperties = isObject(schema.patternProperties) ? schema.patternProperties : {}
  if (Array.isArray(schema.required)) {
    for (const key of schema.required.map(String)) {
      if (value[key] === undefined) issue('required', `must have required property '${key}'`, [...path, key])
    }
  }
  const keys = Object.keys(value).filter((key) => value[key] !== undefined)
  if (typeof schema.minProperties === 'number' && keys.length < schema.minProperties) issue('minProperties', `must NOT have fewer than ${schema.minProperties} properties`)
  if (typeof schema.maxProperties === 'number' && keys.length > schema.maxProperties) issue('maxProperties', `must NOT have more than ${schema.maxProperties} properties`)
  for (const key of keys) {
    const at = [...path, key]
    if (schema.propertyNames !== undefined && !valid(schema.propertyNames, key, root)) issue('propertyNames', `property name '${key}' is invalid`, at)
    let known = false
    if (key in properties) {
      known = true
      check(properties[key], value[key], at, root, out, depth + 1)
    }
    for (const [source, sub] of Object.entries(patternProperties)) {
      if (patternOf(source)?.test(key)) {
        known = true
        check(sub, value[key], at, root, out, depth + 1)
      }
    }
    if (known || schema.additionalProperties === undefined) continue
    if (schema.additionalProperties === false) issue('additionalProperties', `must NOT have additional property '${key}'`, at)
    else check(schema.additionalProperties, value[key], at, root, out, depth + 1)
  }
  if (isObject(schema.dependentRequired)) {
    for (const [key, needs] of Object.entries(schema.dependentRequired)) {
      if (value[key] === undefined || !Array.isArray(needs)) continue
      for (const need of needs.map(String)) if (value[need] === undefined) issue('dependentRequired', `must have property ${need} when property ${key} is present`, [...path, need])
    }
  }
}

/**
 * `anyOf` / `oneOf`: when no alternative holds, the issues of the one alternative of the value's
 * type (an expression-or-number field given 90000 says "must be <= 86400"), else one issue.
 */
function checkAlternatives(options: unknown[], keyword: 'anyOf' | 'oneOf', value: unknown, path: Path, root: unknown, out: SchemaIssue[], depth: number): void {
  const passing = options.filter((option) => valid(option, value, root)).length
  if (keyword === 'oneOf' && passing > 1) {
    out.push({ path, keyword, message: 'must match exactly one schema in oneOf' })
    return
  }
  if (passing > 0) return
  const sameType = options.filter((option) => {
    if (!isObject(option)) return false
    const types = typeof option.type === 'string' ? [option.type] : Array.isArray(option.type) ? option.type.map(String) : []
    return types.length === 0 || types.some((type) => typeMatches(type, value))
  })
  if (sameType.length === 1) check(sameType[0], value, path, root, out, depth + 1)
  else out.push({ path, keyword, message: `must match a schema in ${keyword}` })
}

function valid(schema: unknown, value: unknown, root: unknown): boolean {
  const out: SchemaIssue[] = []
  check(schema, value, [], root, out)
  return out.length === 0
}

/** The issues of `value` against `schema`. */
export function validateValue(schema: unknown, value: unknown, root: unknown = schema): SchemaIssue[] {
  const out: SchemaIssue[] = []
  check(schema, value, [], root, out)
  return out
}

/** `.a.b` / `.a['x-y'].0`: the property notation rjsf's error schema reads. */
function propertyOf(path: Path): string {
  return path.map((key) => (typeof key === 'number' || /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `['${key.replace(/'/g, "\\'")}']`)).join('')
}

function toRjsfError(issue: SchemaIssue): RJSFValidationError {
  const property = propertyOf(issue.path)
  return { name: issue.keyword, property, message: issue.message, stack: `${property} ${issue.message}`.trim(), params: {} }
}

/** rjsf's validator interface over {@link validateValue}. */
export const schemaValidator: ValidatorType<unknown, RJSFSchema, FormContextType> = {
  validateFormData(
    formData: unknown,
    schema: RJSFSchema,
    customValidate?: CustomValidator<unknown, RJSFSchema, FormContextType>,
    transformErrors?: ErrorTransformer<unknown, RJSFSchema, FormContextType>,
    uiSchema?: UiSchema<unknown, RJSFSchema, FormContextType>,
  ): ValidationData<unknown> {
    let errors = validateValue(schema, formData).map(toRjsfError)
    if (transformErrors) errors = transformErrors(errors, uiSchema)
    const errorSchema = toErrorSchema<unknown>(errors)
    if (!customValidate) return { errors, errorSchema }
    const handler = customValidate(formData, createErrorHandler<unknown>(formData), uiSchema, errorSchema)
    return validationDataMerge<unknown>({ errors, errorSchema }, unwrapErrorHandler<unknown>(handler))
  },
  isValid(schema: RJSFSchema, formData: unknown, rootSchema: RJSFSchema): boolean {
    return validateValue(schema, formData, rootSchema).length === 0
  },
  rawValidation<Result>(schema: RJSFSchema, formData?: unknown): { errors?: Result[]; validationError?: Error } {
    return { errors: validateValue(schema, formData) as Result[] }
  },
}
