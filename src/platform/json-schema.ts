/**
 * Checks that a tool's `input_schema` is a JSON Schema Ajv can compile (docs/api/resources.md,
 * "tools": JSON-schema input). Draft-07 by default; `$schema` may name draft 2019-09 or 2020-12.
 * Nothing is fetched: a `$ref` outside the schema does not compile. Compiled schemas are dropped
 * from Ajv again so a long-running process does not collect every schema it has checked; the
 * validators runs use are kept in a bounded cache of their own ({@link schemaValidator}).
 */
import { Ajv, type Options, type ValidateFunction } from 'ajv'
import { Ajv2019 } from 'ajv/dist/2019.js'
import { Ajv2020 } from 'ajv/dist/2020.js'

/** Unknown keywords are annotations (JSON Schema allows them); `format` is not checked here. */
const OPTIONS: Options = { strict: false, validateFormats: false, addUsedSchema: false, logger: false }

type Compiler = Pick<Ajv, 'compile' | 'removeSchema' | 'errorsText'>
const compilers = new Map<string, Compiler>()

function compilerFor(dialect: unknown): Compiler {
  const draft = typeof dialect === 'string' && /draft\/2020-12/.test(dialect) ? '2020' : typeof dialect === 'string' && /draft\/2019-09/.test(dialect) ? '2019' : '07'
  let compiler = compilers.get(draft)
  if (!compiler) {
    compiler = draft === '2020' ? new Ajv2020(OPTIONS) : draft === '2019' ? new Ajv2019(OPTIONS) : new Ajv(OPTIONS)
    compilers.set(draft, compiler)
  }
  return compiler
}

/**
 * Why `schema` is not a usable JSON Schema, or null when it compiles.
 * The message is Ajv's (it quotes only the caller's own schema).
 */
export function jsonSchemaProblem(schema: Record<string, unknown>): string | null {
  const compiled = compile(schema)
  return typeof compiled === 'string' ? `is not a valid JSON Schema: ${compiled}` : null
}

/** The validator of `schema`, or why it does not compile (Ajv's message, at most 500 characters). */
function compile(schema: Record<string, unknown>): ValidateFunction | string {
  const compiler = compilerFor(schema.$schema)
  try {
    return compiler.compile(schema)
  } catch (error) {
    return (error instanceof Error ? error.message : 'does not compile').slice(0, 500)
  } finally {
    try {
      compiler.removeSchema(schema)
    } catch {
      // Nothing was cached for a schema that failed early.
    }
  }
}

/** Most validators kept by {@link schemaValidator}; the oldest is dropped beyond it. */
const VALIDATORS_MAX = 1_000
const validators = new Map<string, ValidateFunction | string>()

/**
 * Checks values against `schema` (a tool's `input_schema` during runs). Compiled once per schema
 * text and process, not once per run: a bounded cache keyed by the schema's JSON.
 * @returns null when `value` is valid, else why not (Ajv's errors, the value named `input`).
 */
export function schemaValidator(schema: Record<string, unknown>): (value: unknown) => string | null {
  const validate = cachedValidator(schema)
  if (typeof validate === 'string') return () => `The tool's input_schema does not compile: ${validate}`
  return (value) => (validate(value) ? null : compilerFor(schema.$schema).errorsText(validate.errors, { dataVar: 'input' }))
}

/** The compiled validator of `schema` from the bounded cache (compiled on a miss), or why it does not compile. */
function cachedValidator(schema: Record<string, unknown>): ValidateFunction | string {
  const key = JSON.stringify(schema)
  let compiled = validators.get(key)
  if (compiled === undefined) {
    compiled = compile(schema)
    if (validators.size >= VALIDATORS_MAX) validators.delete(validators.keys().next().value ?? '')
    validators.set(key, compiled)
  }
  return compiled
}

/**
 * The first way `value` fails `schema`, as the path of the offending field (Ajv's `instancePath`
 * split into keys, or the missing property for `required`) and a message; null when it is valid.
 * A schema that does not compile is a problem at the root (an empty path).
 */
export function schemaIssue(schema: Record<string, unknown>, value: unknown): { path: string[]; message: string } | null {
  const validate = cachedValidator(schema)
  if (typeof validate === 'string') return { path: [], message: `The tool's input_schema does not compile: ${validate}` }
  if (validate(value)) return null
  const [error] = validate.errors ?? []
  if (!error) return { path: [], message: 'is not valid' }
  const path = error.instancePath.split('/').slice(1).map((part) => part.replace(/~1/g, '/').replace(/~0/g, '~'))
  const missing = error.keyword === 'required' && typeof error.params.missingProperty === 'string' ? [error.params.missingProperty] : []
  return { path: [...path, ...missing], message: error.message ?? 'is not valid' }
}
