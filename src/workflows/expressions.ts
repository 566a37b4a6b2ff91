/**
 * Parameter expressions (docs/api/workflows.md): JSONata (the `jsonata` package),
 * never `eval`. A parameter string that starts with `=` is an expression: `"=$.body.name"`,
 * `"=$uppercase($input.name) & '!'"`. Everything else is a literal. To write a literal string
 * that starts with `=`, write it as an expression: `"='=x'"`.
 *
 * What an expression sees: `$` (and `$input`) is the node's input; `$nodes` maps each node id
 * that has run to its output; `$trigger` is the trigger's output; `$static` the workflow's
 * `static_data`; `$execution` is `{uuid, mode, workflow_uuid}`. Each evaluation is bounded
 * ({@link EVALUATION_TIMEOUT_MS}, {@link MAX_DEPTH}, {@link MAX_SEQUENCE}: jsonata's own
 * guardrails) so an expression cannot hang a worker.
 */
import jsonata from 'jsonata'
import { z } from 'zod'
import type { FieldPath } from '../platform/errors.ts'

/** Longest time one expression may evaluate, in milliseconds. */
export const EVALUATION_TIMEOUT_MS = 1_000
/** Deepest nesting of evaluation (recursion) one expression may reach. */
export const MAX_DEPTH = 300
/** Longest sequence (array) one expression may build. */
export const MAX_SEQUENCE = 100_000
/** Longest expression text, in characters. */
export const MAX_EXPRESSION_LENGTH = 10_000

/** What an expression can read besides its input. */
export interface ExpressionScope {
  input: unknown
  nodes: Record<string, unknown>
  trigger: unknown
  static: Record<string, unknown>
  execution: { uuid: string; mode: string; workflow_uuid: string }
}

/** An expression failed to compile or to evaluate; the message names the position, never a value. */
export class ExpressionError extends Error {
  override name = 'ExpressionError'
  constructor(
    message: string,
    /** Where in the parameters, e.g. `['values', 'name']`. */
    readonly path: FieldPath,
  ) {
    super(message)
  }
}

/** True for a string that is an expression. */
export function isExpression(value: unknown): value is string {
  return typeof value === 'string' && value.startsWith('=')
}

type Compiled = ReturnType<typeof jsonata>
const compiled = new Map<string, Compiled>()
const COMPILED_MAX = 5_000

/** A JSONata error object's message with its position. */
function describe(error: unknown): string {
  if (error && typeof error === 'object' && 'message' in error) {
    const { message, position } = error as { message: unknown; position?: unknown }
    return typeof position === 'number' ? `${String(message)} (at character ${position})` : String(message)
  }
  return 'The expression is invalid'
}

/**
 * The compiled form of an expression's text (the part after `=`), cached per process.
 * @throws ExpressionError when it does not parse.
 */
export function compile(text: string, path: FieldPath = []): Compiled {
  let expression = compiled.get(text)
  if (expression) return expression
  if (text.length > MAX_EXPRESSION_LENGTH) throw new ExpressionError(`An expression holds at most ${MAX_EXPRESSION_LENGTH} characters`, path)
  try {
    // jsonata's own guardrails, checked on every evaluation step of each evaluate() call.
    expression = jsonata(text, { timeout: EVALUATION_TIMEOUT_MS, stack: MAX_DEPTH, sequence: MAX_SEQUENCE })
  } catch (error) {
    throw new ExpressionError(`Invalid expression: ${describe(error)}`, path)
  }
  if (compiled.size >= COMPILED_MAX) compiled.clear()
  compiled.set(text, expression)
  return expression
}

/**
 * A zod schema for a parameter that accepts `schema` or an expression (checked to compile).
 * Use it for every parameter a user may compute; at run time the evaluated value must satisfy
 * `schema` (the node type parses its evaluated parameters again).
 */
export function expr<T extends z.ZodType>(schema: T) {
  return z.union([Expression, schema])
}

/** An expression string (`=` then JSONata that compiles). */
export const Expression = z
  .string()
  .regex(/^=/, 'an expression starts with "="')
  .max(MAX_EXPRESSION_LENGTH + 1)
  .superRefine((value, ctx) => {
    try {
      compile(value.slice(1))
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message })
    }
  })

/** Every expression anywhere in a JSON value, with its path: for checks on save. */
export function expressionIssues(value: unknown, path: FieldPath = []): ExpressionError[] {
  const issues: ExpressionError[] = []
  walk(value, path, (text, at) => {
    try {
      compile(text.slice(1), at)
    } catch (error) {
      issues.push(error as ExpressionError)
    }
  })
  return issues
}

function walk(value: unknown, path: FieldPath, visit: (text: string, path: FieldPath) => void): void {
  if (isExpression(value)) visit(value, path)
  else if (Array.isArray(value)) value.forEach((item, index) => walk(item, [...path, index], visit))
  else if (value && typeof value === 'object') for (const [key, item] of Object.entries(value)) walk(item, [...path, key], visit)
}

/** JSONata answers sequences (arrays with extra members) and `undefined`; make it plain JSON. */
function plain(value: unknown): unknown {
  if (value === undefined) return undefined
  if (typeof value === 'function') return undefined
  if (Array.isArray(value)) return value.map((item) => plain(item) ?? null)
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(value)) {
      const converted = plain(item)
      if (converted !== undefined) out[key] = converted
    }
    return out
  }
  if (typeof value === 'number' && !Number.isFinite(value)) return null
  return value
}

/**
 * Evaluates one expression (with its `=`) against a scope. `undefined` when it matched nothing.
 * @throws ExpressionError when it does not compile, fails, runs longer than
 *   {@link EVALUATION_TIMEOUT_MS} or recurses deeper than {@link MAX_DEPTH}.
 */
export async function evaluate(text: string, scope: ExpressionScope, path: FieldPath = []): Promise<unknown> {
  const expression = compile(text.slice(1), path)
  const bindings = { input: scope.input, nodes: scope.nodes, trigger: scope.trigger, static: scope.static, execution: scope.execution }
  try {
    return plain(await expression.evaluate(scope.input, bindings))
  } catch (error) {
    throw new ExpressionError(`Expression failed: ${describe(error)}`, path)
  }
}

/**
 * A copy of `value` with every expression replaced by its result (keys whose expression matched
 * nothing are left out of objects; in arrays they become null).
 * @throws ExpressionError naming the path of the first expression that fails.
 */
export async function evaluateDeep(value: unknown, scope: ExpressionScope, path: FieldPath = []): Promise<unknown> {
  if (isExpression(value)) return evaluate(value, scope, path)
  if (Array.isArray(value)) {
    const out: unknown[] = []
    for (let index = 0; index < value.length; index++) out.push((await evaluateDeep(value[index], scope, [...path, index])) ?? null)
    return out
  }
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {}
    for (const [key, item] of Object.entries(value)) {
      const result = await evaluateDeep(item, scope, [...path, key])
      if (result !== undefined) out[key] = result
    }
    return out
  }
  return value
}

/** True when `value` holds an expression anywhere (so a node's parameters can skip evaluation); stops at the first. */
export function hasExpression(value: unknown): boolean {
  if (isExpression(value)) return true
  if (Array.isArray(value)) return value.some(hasExpression)
  return value !== null && typeof value === 'object' && Object.values(value).some(hasExpression)
}
