/**
 * The pieces every list screen shares: a title row with its main action, the search field and
 * visibility filter above the table (each change goes back to page 1: the caller's `onChange`
 * does it), and paging under the table (the service's `meta.current_page` and `meta.last_page`).
 */
import { Group, Pagination, SegmentedControl, TextInput, Title } from '@mantine/core'
import { useState, type ReactNode } from 'react'

export function ScreenTitle({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <Group justify="space-between" mb="md" wrap="wrap" gap="sm">
      <Title order={2} style={{ overflowWrap: 'anywhere', minWidth: 0 }}>
        {title}
      </Title>
      <Group gap="xs">{children}</Group>
    </Group>
  )
}

export function Pager({ page, lastPage, onChange }: { page: number; lastPage: number; onChange: (page: number) => void }) {
  if (lastPage <= 1) return null
  return (
    <Group justify="center" mt="md">
      <Pagination total={lastPage} value={page} onChange={onChange} getControlProps={(control) => ({ 'aria-label': `${control} page` })} />
    </Group>
  )
}

/** The list's `search` parameter, as typed (the caller debounces it). */
export function SearchField({
  value,
  onChange,
  placeholder = 'Name or description',
}: {
  value: string
  onChange: (value: string) => void
  placeholder?: string
}) {
  return (
    <TextInput
      label="Search"
      placeholder={placeholder}
      value={value}
      onChange={(event) => onChange(event.currentTarget.value)}
      style={{ flex: '1 1 200px' }}
    />
  )
}

/** The `visibility` filter, or `all` for none. */
export type VisibilityChoice = 'all' | 'private' | 'workspace' | 'public'

export function VisibilityFilter({ value, onChange }: { value: VisibilityChoice; onChange: (value: VisibilityChoice) => void }) {
  return (
    <SegmentedControl
      aria-label="Visibility"
      value={value}
      onChange={(choice) => onChange(choice as VisibilityChoice)}
      data={[
        { value: 'all', label: 'All' },
        { value: 'private', label: 'Private' },
        { value: 'workspace', label: 'Workspace' },
        { value: 'public', label: 'Public' },
      ]}
    />
  )
}

/**
 * A list filter's state (search, visibility, status…) whose every change goes back to page 1,
 * since the page the caller was on may not exist under the new filter.
 */
export function useFilter<T>(initial: T, setPage: (page: number) => void): [T, (value: T) => void] {
  const [value, setValue] = useState(initial)
  return [
    value,
    (next: T) => {
      setValue(next)
      setPage(1)
    },
  ]
}
