import { defineEntity, p, type InferEntity } from '@mikro-orm/core'
import { resourceKeys, softDelete, timestamps, VISIBILITIES } from './columns.ts'
import { ownership } from './ownership.ts'

/**
 * A dataset of evaluation cases (`datasets`, docs/api/evaluations.md, "Datasets"): owned by a user
 * in a workspace and seen like a prompt (visibility, shares, workspace roles). Soft-deleted.
 *
 * `items_count` is kept by the statements that add and delete items, in their transaction
 * (src/evaluations/dataset-items.service.ts), as `threads.messages_count` is: every dataset answer
 * and list page carries it, and a count subquery would read every item of every dataset listed.
 */
export const Dataset = defineEntity({
  name: 'Dataset',
  tableName: 'datasets',
  indexes: [{ properties: ['workspace', 'createdAt'] }, { properties: ['user'] }],
  properties: {
    ...resourceKeys(),
    name: p.string().length(255),
    description: p.text().default(''),
    visibility: p.enum(VISIBILITIES).default('private'),
    itemsCount: p.integer().default(0).fieldName('items_count'),
    ...ownership(),
    ...timestamps(),
    ...softDelete(),
  },
})

export type IDataset = InferEntity<typeof Dataset>

/**
 * One case of a dataset (`dataset_items`): the input sent to what is evaluated, the output
 * expected of it (optional) and free-form metadata. Reached only through its dataset, whose
 * access rules it follows; hard-deleted, and deleted with its dataset's row. The index on
 * (`dataset_id`, `id`) serves the item list, which pages in the order items were added.
 */
export const DatasetItem = defineEntity({
  name: 'DatasetItem',
  tableName: 'dataset_items',
  indexes: [{ properties: ['dataset', 'id'] }],
  properties: {
    ...resourceKeys(),
    dataset: () =>
      p.manyToOne(Dataset)
        .fieldName('dataset_id')
        .deleteRule('cascade'),
    input: p.text(),
    expectedOutput: p.text().nullable().fieldName('expected_output'),
    metadata: p.json<Record<string, unknown>>().nullable(),
    ...timestamps(),
  },
})

export type IDatasetItem = InferEntity<typeof DatasetItem>
