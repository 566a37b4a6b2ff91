/** Metadata as every resource with `metadata` stores it (docs/api/resources.md). */

/** Merges a metadata patch key by key; a `null` value removes the key (docs/api/resources.md). */
export function mergeMetadata(current: Record<string, unknown>, patch: Record<string, unknown>): Record<string, unknown> {
  const merged = { ...current }
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete merged[key]
    else merged[key] = value
  }
  return merged
}
