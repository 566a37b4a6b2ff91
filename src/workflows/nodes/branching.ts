/**
 * The branching nodes (docs/api/workflows.md): `if` (handles `true`/`false`) and
 * `switch` (one handle per named case, plus `fallback`). Both pass their input on unchanged; the
 * handles they answer decide which outgoing edges fire (see NodeResult.branches).
 *
 * A condition is a boolean or an expression; what the expression answers is taken by truthiness
 * as JSONata's `$boolean` does ({@link truthy}), and an expression that matched nothing is false.
 */
import { z } from 'zod'
import { text } from '../../access/wire.ts'
import { Expression } from '../expressions.ts'
import type { NodeType } from '../types.ts'

/** Most cases one switch holds. */
export const MAX_CASES = 50
/** The handle a switch answers when no case matched and `fallback` is on. */
export const FALLBACK = 'fallback'

/**
 * A condition: a boolean or an expression when saved; after evaluation any JSON value (so the
 * schema also takes the other JSON types), or absent when the expression matched nothing.
 */
const Condition = z
  .union([Expression, z.boolean(), z.number(), z.string(), z.null(), z.array(z.unknown()), z.record(z.string(), z.unknown())])
  .optional()
  .meta({ description: 'A boolean, or an expression ("=...") whose answer is taken by truthiness' })

/**
 * JSONata's boolean cast (`$boolean`): false for false, 0, '', null, undefined, an empty array or
 * object and for arrays whose members are all false; true otherwise.
 */
export function truthy(value: unknown): boolean {
  if (value === undefined || value === null) return false
  if (typeof value === 'boolean') return value
  if (typeof value === 'number') return value !== 0
  if (typeof value === 'string') return value.length > 0
  if (Array.isArray(value)) return value.some(truthy)
  if (typeof value === 'object') return Object.keys(value).length > 0
  return false
}

const IfParams = z.strictObject({ condition: Condition })
type TIfParams = z.infer<typeof IfParams>

/** `if`: output = input; branches `['true']` or `['false']`. */
export const ifNode: NodeType<TIfParams> = {
  type: 'if',
  label: 'If',
  description: 'Passes its input on to the "true" or the "false" output, by a condition.',
  kind: 'action',
  instant: true,
  parameters: IfParams,
  outputs: () => ['true', 'false'],
  execute: async ({ params, input }) => ({ output: input ?? null, branches: [truthy(params.condition) ? 'true' : 'false'] }),
}

const SwitchParams = z
  .strictObject({
    cases: z
      .array(z.strictObject({ name: text(100, 1).meta({ description: 'The output handle of this case' }), condition: Condition }))
      .min(1)
      .max(MAX_CASES),
    mode: z.enum(['first', 'all']).default('first').meta({ description: 'first: the first matching case fires; all: every matching case' }),
    fallback: z
      .boolean()
      .default(true)
      .meta({ description: `When no case matched, fire the "${FALLBACK}" output` }),
  })
  .superRefine((params, ctx) => {
    const seen = new Set<string>()
    params.cases.forEach((item, index) => {
      if (seen.has(item.name))
        ctx.addIssue({ code: 'custom', path: ['cases', index, 'name'], message: `Another case is named "${item.name}"` })
      else if (params.fallback && item.name === FALLBACK) {
        ctx.addIssue({
          code: 'custom',
          path: ['cases', index, 'name'],
          message: `"${FALLBACK}" names the fallback output; rename the case or turn fallback off`,
        })
      }
      seen.add(item.name)
    })
  })
type TSwitchParams = z.infer<typeof SwitchParams>

/** `switch`: output = input; branches = the matching case names (the first only in mode `first`), or `['fallback']`. */
export const switchNode: NodeType<TSwitchParams> = {
  type: 'switch',
  label: 'Switch',
  description: 'Passes its input on to the output of the first (or every) case whose condition holds, else to "fallback".',
  kind: 'action',
  instant: true,
  parameters: SwitchParams,
  outputs: (params) => [...params.cases.map((item) => item.name), ...(params.fallback ? [FALLBACK] : [])],
  execute: async ({ params, input }) => {
    const matched = params.cases.filter((item) => truthy(item.condition)).map((item) => item.name)
    const branches = matched.length ? (params.mode === 'first' ? matched.slice(0, 1) : matched) : params.fallback ? [FALLBACK] : []
    return { output: input ?? null, branches }
  },
}
