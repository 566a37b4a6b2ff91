/**
 * What every list screen shows around its rows (docs/console.md, "Errors" and "Layout"): a list
 * query's loading, failed (with a retry) and empty states, then its rows in a table that scrolls
 * sideways inside its container (so a 360 px screen scrolls the table, not the page), and paging
 * under it (the service's `meta.last_page`).
 */
import { Group, Table, Text, VisuallyHidden } from '@mantine/core'
import type { ReactNode } from 'react'
import { Link } from 'react-router'
import { Pager } from './ListControls.tsx'
import { Empty, ErrorNotice, Loading } from './states.tsx'

/** The part of a TanStack Query result for a list procedure that {@link ListStates} reads. */
export interface ListQuery {
  isPending: boolean
  error: unknown
  refetch: () => unknown
  data?: { meta: { last_page: number } }
}

/**
 * A list query's states: `loading` while pending, the error with a retry, `empty` when `rows` is
 * an empty array, `children(rows)` when it has rows, and the pager when `paging` is given.
 * `rows` is undefined until the query has answered (it may be the answer's rows filtered here).
 */
export function ListStates<Row>({
  query,
  rows,
  loading,
  empty,
  paging,
  children,
}: {
  query: ListQuery
  rows: Row[] | undefined
  loading: string
  empty: { title: string; detail?: ReactNode }
  paging?: { page: number; onChange: (page: number) => void }
  children: (rows: Row[]) => ReactNode
}) {
  return (
    <>
      {query.isPending ? <Loading label={loading} /> : null}
      {query.error ? <ErrorNotice error={query.error} onRetry={() => void query.refetch()} /> : null}
      {rows && rows.length === 0 ? <Empty title={empty.title}>{empty.detail}</Empty> : null}
      {rows && rows.length > 0 ? children(rows) : null}
      {paging && query.data ? <Pager page={paging.page} lastPage={query.data.meta.last_page} onChange={paging.onChange} /> : null}
    </>
  )
}

/** A column heading; `hidden` ones are read by screen readers only (a column of buttons). */
export type Column = string | { hidden: string }

/**
 * A striped table with its column headings, inside a container that scrolls sideways below
 * `minWidth` (px). `children` are the body's rows (`Table.Tr`).
 */
export function DataTable({
  columns,
  minWidth,
  label,
  highlightOnHover = false,
  children,
}: {
  columns: Column[]
  minWidth: number
  label?: string
  highlightOnHover?: boolean
  children: ReactNode
}) {
  return (
    <Table.ScrollContainer minWidth={minWidth}>
      <Table striped highlightOnHover={highlightOnHover} aria-label={label}>
        <Table.Thead>
          <Table.Tr>
            {columns.map((column) =>
              typeof column === 'string' ? (
                <Table.Th key={column} scope="col">
                  {column}
                </Table.Th>
              ) : (
                <Table.Th key={column.hidden} scope="col">
                  <VisuallyHidden>{column.hidden}</VisuallyHidden>
                </Table.Th>
              ),
            )}
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>{children}</Table.Tbody>
      </Table>
    </Table.ScrollContainer>
  )
}

/**
 * The first cell of a resource's row: its name as a link to `to` (cut to one line, the whole
 * name in `title`), anything `before` it (a badge), and its description under it on two lines at
 * most. Long names and descriptions never widen the table.
 */
export function NameCell({
  to,
  name,
  description,
  maxWidth = 360,
  before,
  children,
}: {
  to: string
  name: string
  description?: string | null
  maxWidth?: number
  before?: ReactNode
  children?: ReactNode
}) {
  return (
    <Table.Td style={{ maxWidth }}>
      <Group gap={4} wrap="nowrap">
        {before}
        <Text component={Link} to={to} fw={600} truncate="end" display="block" title={name} style={{ minWidth: 0 }}>
          {children ?? name}
        </Text>
      </Group>
      {description ? (
        <Text size="sm" c="dimmed" lineClamp={2} style={{ overflowWrap: 'anywhere' }}>
          {description}
        </Text>
      ) : null}
    </Table.Td>
  )
}
