/**
 * Checks that a tool's `input_schema` is a JSON Schema Ajv can compile (API.md section 5,
 * "tools": JSON-schema input). Draft-07 by default; `$schema` may name draft 2019-09 or 2020-12.
 * Nothing is fetched: a `$ref` outside the schema does not compile. Compiled schemas are dropped
 * again so a long-running process does not collect every schema it has checked.
 */
import { Ajv, type Options } from 'ajv'
import { Ajv2019 } from 'ajv/dist/2019.js'
import { Ajv2020 } from 'ajv/dist/2020.js'

/** Unknown keywords are annotations (JSON Schema allows them); `format` is not checked here. */
const OPTIONS: Options = { strict: false, validateFormats: false, addUsedSchema: false, logger: false }

type Compiler = Pick<Ajv, 'compile' | 'removeSchema'>
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
  const compiler = compilerFor(schema.$schema)
  try {
    compiler.compile(schema)
    return null
  } catch (error) {
    const message = error instanceof Error ? error.message : 'does not compile'
    return `is not a valid JSON Schema: ${message.slice(0, 500)}`
  } finally {
    try {
      compiler.removeSchema(schema)
    } catch {
      // Nothing was cached for a schema that failed early.
    }
  }
}
