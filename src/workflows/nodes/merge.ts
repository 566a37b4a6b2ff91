/**
 * The merge node (docs/api/workflows.md): joins the outputs that arrive on several
 * edges. The executor gives a node with several active incoming edges an array of their outputs
 * (in edge order), and a node with one the output itself.
 */
import { z } from 'zod'
import { isRecord } from '../../access/wire.ts'
import type { NodeType } from '../types.ts'

const MergeParams = z.strictObject({
  mode: z
    .enum(['append', 'merge_objects'])
    .default('append')
    .meta({
      description: 'append: one array of the inputs (array inputs flattened one level); merge_objects: one object, later inputs winning',
    }),
})
type TMergeParams = z.infer<typeof MergeParams>

/** The incoming outputs as a list: the array of several edges, or the single input alone. */
const arrivals = (input: unknown): unknown[] => (input === undefined ? [] : Array.isArray(input) ? input : [input])

/** `merge`: append -> an array; merge_objects -> a shallow merge of the object inputs (others ignored). */
export const mergeNode: NodeType<TMergeParams> = {
  type: 'merge',
  label: 'Merge',
  description: 'Joins the outputs arriving on several edges: appended into one array, or merged into one object.',
  kind: 'action',
  instant: true,
  parameters: MergeParams,
  outputs: () => null,
  execute: async ({ params, input }) => {
    const items = arrivals(input)
    // Spread defines members (a "__proto__" key stays a plain member, as JSON has it).
    if (params.mode === 'merge_objects') return { output: items.filter(isRecord).reduce((merged, item) => ({ ...merged, ...item }), {}) }
    return { output: items.flatMap((item) => (Array.isArray(item) ? item : [item])) }
  },
}
