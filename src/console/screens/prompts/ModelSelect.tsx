/**
 * A choice of large language model for a prompt run: the workspace's models that have a usable
 * credential (`largeLanguageModels.list`, `is_available: true`), by slug, or the service's default
 * (docs/api/runs.md, "Models and credentials"). A stored choice no longer available stays listed,
 * so the form never shows a blank value for it.
 */
import { Select } from '@mantine/core'
import { useAvailableModels } from './api.ts'

/** Mantine's Select cannot hold '' as a value: the default model is this sentinel in the control. */
const DEFAULT = '__default__'

export function ModelSelect({
  label,
  description,
  value,
  onChange,
  error,
}: {
  label: string
  description?: string
  /** A model slug, or '' for the service's default. */
  value: string
  onChange: (slug: string) => void
  error?: string
}) {
  const models = useAvailableModels()
  const options = (models.data?.data ?? []).map((model) => ({ value: model.slug, label: `${model.name} (${model.provider.name})` }))
  if (value && !options.some((option) => option.value === value)) options.unshift({ value, label: value })
  return (
    <Select
      label={label}
      description={description}
      data={[{ value: DEFAULT, label: 'Service default' }, ...options]}
      value={value || DEFAULT}
      onChange={(slug) => onChange(!slug || slug === DEFAULT ? '' : slug)}
      allowDeselect={false}
      searchable
      nothingFoundMessage="No such model"
      error={error ?? (models.error ? 'The models could not be listed' : undefined)}
      comboboxProps={{ withinPortal: true }}
    />
  )
}
