/**
 * The pieces every list screen shares: a title row with its main action, and paging under the
 * table (the service's `meta.current_page` and `meta.last_page`).
 */
import { Group, Pagination, Title } from '@mantine/core'
import type { ReactNode } from 'react'

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
