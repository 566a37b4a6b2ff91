/**
 * Dataset and dataset item wire shapes (docs/api/evaluations.md, "Datasets") and the row -> wire
 * mappers.
 */
import { z } from 'zod'
import { MediaKey, StorableObject, Visibility } from '../access/resource.schema.ts'
import { NestedUser, NestedWorkspace, toNestedUser, toWorkspaceBase, type UserRow, type WorkspaceRow } from '../access/user-workspace.schema.ts'
import { envelope, iso, jsonBytes, jsonRecordOf, name, paginated, pageQuery, sortParam, text, timestamp, withParam } from '../access/wire.ts'
import type { Visibility as TVisibility } from '../../entities/index.ts'

/** Relations a dataset response can embed (`with`). */
const DATASET_RELATIONS = ['user', 'workspace'] as const
/** Sortable columns of the dataset list. */
const DATASET_SORTS = ['created_at', '-created_at', 'name', '-name', 'updated_at', '-updated_at'] as const

/** Most items one `POST /api/v1/datasets/{dataset_uuid}/items` adds, from `items` or from the files together. */
export const DATASET_ITEMS_PER_REQUEST_MAX = 1000
/** Longest item `input` and `expected_output`, in characters. */
export const DATASET_ITEM_TEXT_MAX = 100_000
/** Largest item `metadata`, serialized as JSON, in bytes (64 KiB, as resource metadata). */
export const DATASET_ITEM_METADATA_MAX_BYTES = 64 * 1024
/** Most uploads one request names in `file.keys`. */
export const DATASET_FILE_KEYS_MAX = 10

/** An item's `input`: 1..100,000 characters, not blank. */
const ItemInputText = text(DATASET_ITEM_TEXT_MAX, 1).refine((value) => value.trim().length > 0, 'must not be blank')

/** An item's `metadata`: a JSON object jsonb can store, at most 64 KiB as JSON. */
const ItemMetadata = StorableObject().superRefine((value, ctx) => {
  if (jsonBytes(value) > DATASET_ITEM_METADATA_MAX_BYTES) {
    ctx.addIssue({ code: 'custom', message: `metadata must not exceed ${DATASET_ITEM_METADATA_MAX_BYTES} bytes as JSON` })
  }
})

/** One item as sent, in `items` or as one line of a JSONL upload. */
export const DatasetItemInput = z.strictObject({
  input: ItemInputText,
  expected_output: text(DATASET_ITEM_TEXT_MAX).nullable().optional(),
  metadata: ItemMetadata.nullable().optional(),
})
export type TDatasetItemInput = z.infer<typeof DatasetItemInput>

const With = withParam(DATASET_RELATIONS)
const Description = text(2000)

/** `POST /api/v1/datasets` (plus the workspace context's `workspace_uuid`). */
export const CreateDatasetInput = z.strictObject({
  workspace_uuid: z.uuid().optional(),
  name: name(),
  description: Description.nullable().optional(),
  visibility: Visibility.optional(),
  with: With.optional(),
})
export type TCreateDatasetInput = z.infer<typeof CreateDatasetInput>

/** `PUT /api/v1/datasets/{dataset_uuid}`: omitted fields are kept; `null` clears `description` (to `''`). */
export const UpdateDatasetInput = z.strictObject({
  dataset_uuid: z.uuid(),
  workspace_uuid: z.uuid().optional(),
  name: name().optional(),
  description: Description.nullable().optional(),
  visibility: Visibility.optional(),
  with: With.optional(),
})
export type TUpdateDatasetInput = z.infer<typeof UpdateDatasetInput>

/** Retrieve query: `with` only validates (a single dataset embeds user and workspace anyway). */
export const RetrieveDatasetInput = z.strictObject({
  dataset_uuid: z.uuid(),
  workspace_uuid: z.uuid().optional(),
  with: With.optional(),
})

/** Delete path (plus the workspace context). */
export const DeleteDatasetInput = z.strictObject({ dataset_uuid: z.uuid(), workspace_uuid: z.uuid().optional() })

/** `GET /api/v1/datasets` query: the paginator, `with`, `search` (name and description), `visibility`. */
export const ListDatasetsInput = z.strictObject({
  ...pageQuery,
  sort: sortParam(DATASET_SORTS, '-created_at'),
  with: With.optional(),
  search: text(255).optional(),
  visibility: Visibility.optional(),
  workspace_uuid: z.uuid().optional(),
}).prefault({})
export type TListDatasetsInput = z.infer<typeof ListDatasetsInput>

/** `GET /api/v1/datasets/{dataset_uuid}/items` query: the paginator only (oldest first). */
export const ListDatasetItemsInput = z.strictObject({
  dataset_uuid: z.uuid(),
  workspace_uuid: z.uuid().optional(),
  ...pageQuery,
})
export type TListDatasetItemsInput = z.infer<typeof ListDatasetItemsInput>

/** `file`: uploads (`POST /api/v1/media`) of JSON Lines, one item per non-empty line. */
const DatasetFileInput = z.strictObject({
  keys: z
    .array(MediaKey)
    .min(1)
    .max(DATASET_FILE_KEYS_MAX)
    .superRefine((keys, ctx) => {
      keys.forEach((key, index) => {
        if (keys.indexOf(key) !== index) ctx.addIssue({ code: 'custom', path: [index], message: 'keys must be unique' })
      })
    }),
})

/**
 * `POST /api/v1/datasets/{dataset_uuid}/items`: exactly one of `items` (1..1,000) or `file`
 * (JSONL uploads holding 1..1,000 items together, checked when they are read). Which one was sent
 * is checked by the service, after the dataset's access check, so that a request for a dataset
 * the caller may not see is a 404 whatever its body (./dataset-items.service.ts).
 */
export const CreateDatasetItemsInput = z.strictObject({
  dataset_uuid: z.uuid(),
  workspace_uuid: z.uuid().optional(),
  items: z
    .array(DatasetItemInput)
    .min(1)
    .max(DATASET_ITEMS_PER_REQUEST_MAX)
    .optional()
    .meta({ description: `The items to add, in order (1..${DATASET_ITEMS_PER_REQUEST_MAX}). Send either \`items\` or \`file\`.` }),
  file: DatasetFileInput.optional().meta({
    description: `JSONL uploads (\`POST /api/v1/media\`): one item per non-empty line, ${DATASET_ITEMS_PER_REQUEST_MAX} at most over all the files. Send either \`items\` or \`file\`.`,
  }),
})
export type TCreateDatasetItemsInput = z.infer<typeof CreateDatasetItemsInput>

/** `PUT /api/v1/dataset-items/{item_uuid}`: omitted fields are kept; `null` clears `expected_output` and `metadata`. */
export const UpdateDatasetItemInput = z.strictObject({
  item_uuid: z.uuid(),
  workspace_uuid: z.uuid().optional(),
  input: ItemInputText.optional(),
  expected_output: text(DATASET_ITEM_TEXT_MAX).nullable().optional(),
  metadata: ItemMetadata.nullable().optional(),
})
export type TUpdateDatasetItemInput = z.infer<typeof UpdateDatasetItemInput>

/** `DELETE /api/v1/dataset-items/{item_uuid}`. */
export const DeleteDatasetItemInput = z.strictObject({ item_uuid: z.uuid(), workspace_uuid: z.uuid().optional() })

/** The Dataset shape. */
export const Dataset = z
  .object({
    uuid: z.uuid(),
    name: z.string(),
    description: z.string(),
    visibility: Visibility,
    is_owner: z.boolean(),
    /** Items of the dataset, kept in the transaction that adds or deletes them. */
    items_count: z.number().int(),
    user: NestedUser.nullable(),
    workspace: NestedWorkspace.nullable(),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .meta({ id: 'Dataset' })
export type TDataset = z.infer<typeof Dataset>

/** The DatasetItem shape. */
export const DatasetItem = z
  .object({
    uuid: z.uuid(),
    input: z.string(),
    expected_output: z.string().nullable(),
    metadata: z.record(z.string(), z.unknown()).nullable(),
    created_at: timestamp(),
    updated_at: timestamp(),
  })
  .meta({ id: 'DatasetItem' })
export type TDatasetItem = z.infer<typeof DatasetItem>

/** `{data: Dataset}`. */
export const DatasetResponse = envelope(Dataset)
/** A page of datasets. */
export const DatasetList = paginated(Dataset)
/** `{data: DatasetItem}`. */
export const DatasetItemResponse = envelope(DatasetItem)
/** `{data: [DatasetItem, ...]}`: the items added, in the order sent. */
export const DatasetItemsResponse = envelope(z.array(DatasetItem))
/** A page of a dataset's items. */
export const DatasetItemList = paginated(DatasetItem)

/** Columns of `datasets` a mapper reads (see `selectColumns` in src/platform/sql.ts). */
export const DATASET_FIELDS = ['id', 'uuid', 'name', 'description', 'visibility', 'itemsCount', 'userId', 'workspaceId', 'createdAt', 'updatedAt'] as const

/** A `datasets` row as raw SQL reads it with {@link DATASET_FIELDS}. */
export interface DatasetRow {
  id: number
  uuid: string
  name: string
  description: string
  visibility: TVisibility
  itemsCount: number | string
  userId: number
  workspaceId: number
  createdAt: Date | string
  updatedAt: Date | string
}

/** Row -> wire; `user`/`workspace` are null when not embedded. */
export function toDataset(
  row: DatasetRow,
  related: { user: UserRow | null; workspace: WorkspaceRow | null },
  viewerId: number,
  appUrl: string,
): TDataset {
  return {
    uuid: row.uuid,
    name: row.name,
    description: row.description,
    visibility: row.visibility,
    is_owner: row.userId === viewerId,
    items_count: Number(row.itemsCount),
    user: related.user ? toNestedUser(related.user, appUrl) : null,
    workspace: related.workspace ? { ...toWorkspaceBase(related.workspace, viewerId, appUrl), user: null } : null,
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  }
}

/** The columns of an item as {@link DatasetItemRow}, over alias `i`. */
export const DATASET_ITEM_COLUMNS = `i.id::float8 as id, i.uuid, i.input, i.expected_output as "expectedOutput", i.metadata,
  i.created_at as "createdAt", i.updated_at as "updatedAt"`

/** A `dataset_items` row as {@link DATASET_ITEM_COLUMNS} reads it. */
export interface DatasetItemRow {
  id: number
  uuid: string
  input: string
  expectedOutput: string | null
  /** jsonb: parsed on PostgreSQL, sometimes text on PGlite. */
  metadata: unknown
  createdAt: Date | string
  updatedAt: Date | string
}

/** Row -> wire. */
export function toDatasetItem(row: DatasetItemRow): TDatasetItem {
  return {
    uuid: row.uuid,
    input: row.input,
    expected_output: row.expectedOutput,
    metadata: row.metadata === null || row.metadata === undefined ? null : jsonRecordOf(row.metadata),
    created_at: iso(row.createdAt),
    updated_at: iso(row.updatedAt),
  }
}
