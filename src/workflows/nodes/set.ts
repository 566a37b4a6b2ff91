/**
 * The set node (docs/api/workflows.md): builds a value from expressions over the input,
 * merged over the input or replacing it, and can write the workflow's `static_data` (values kept
 * across executions). A set node with `static_data` runs with the workflow row locked, over the
 * static data stored now, and its write is stored as it ends (src/workflows/static-data.ts).
 */
import { z } from 'zod'
import { isRecord } from '../../access/wire.ts'
import { expr } from '../expressions.ts'
import { NodeError, type NodeType } from '../types.ts'

/** An object whose members may hold expressions anywhere, or one expression answering an object. */
const ComputedObject = expr(z.record(z.string(), z.unknown()))

const SetParams = z.strictObject({
  values: ComputedObject.default({}).meta({ description: 'The members to set (expressions anywhere)' }),
  mode: z
    .enum(['merge', 'replace'])
    .default('merge')
    .meta({ description: 'merge: shallow-merge values over an object input; replace: output values alone' }),
  static_data: ComputedObject.optional().meta({ description: "Members merged into the workflow's static_data (kept across executions)" }),
})
type TSetParams = z.infer<typeof SetParams>

/** `set`: output = `values` merged over the input (when it is an object and mode is merge), else `values`. */
export const setNode: NodeType<TSetParams> = {
  type: 'set',
  label: 'Set',
  description: "Sets values computed from the input (merged over it or replacing it); can also update the workflow's static_data.",
  kind: 'action',
  instant: true,
  parameters: SetParams,
  outputs: () => null,
  changesStaticData: (parameters) => parameters.static_data !== undefined,
  execute: async ({ params, input, staticData }) => {
    // After evaluation a string can only be an expression's answer that itself reads as an expression: not an object.
    if (!isRecord(params.values)) throw new NodeError('invalid_parameters', 'values: the expression must answer an object', false)
    if (typeof params.static_data === 'string')
      throw new NodeError('invalid_parameters', 'static_data: the expression must answer an object', false)
    const values = params.values
    // Defined, not assigned: a "__proto__" key stays a plain member, as JSON has it.
    for (const [key, value] of Object.entries(params.static_data ?? {})) {
      Object.defineProperty(staticData, key, { value, enumerable: true, writable: true, configurable: true })
    }
    return { output: params.mode === 'merge' && isRecord(input) ? { ...input, ...values } : values }
  },
}
