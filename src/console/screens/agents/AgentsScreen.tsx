/**
 * Agents: the list with search and filters (visibility, favourites; a star marks the caller's favourites), each row leading to its edit
 * screen and to a chat with it (`GET /api/v1/agents`); an agent imported from a portable document (./AgentPortable.tsx).
 */
import { Badge, Button, Group, Switch, Table, Text } from '@mantine/core'
import { useDebouncedValue } from '@mantine/hooks'
import { useState } from 'react'
import { Link } from 'react-router'
import { ScreenTitle, SearchField, VisibilityFilter, type VisibilityChoice, useFilter } from '../../ui/ListControls.tsx'
import { DataTable, ListStates, NameCell } from '../../ui/ListTable.tsx'
import { useAgents } from './api.ts'
import { ImportButton } from './AgentPortable.tsx'

export default function AgentsScreen() {
  const [page, setPage] = useState(1)
  const [search, setSearch] = useFilter('', setPage)
  const [debounced] = useDebouncedValue(search.trim(), 250)
  const [visibility, setVisibility] = useFilter<VisibilityChoice>('all', setPage)
  const [favorite, setFavorite] = useState(false)
  const input = {
    page,
    per_page: 20,
    sort: '-created_at' as const,
    ...(debounced ? { search: debounced } : {}),
    ...(visibility !== 'all' ? { visibility } : {}),
    ...(favorite ? { favorite: true } : {}),
  }
  const agents = useAgents(input)
  return (
    <>
      <ScreenTitle title="Agents">
        <ImportButton />
        <Button component={Link} to="/agents/new">
          New agent
        </Button>
      </ScreenTitle>
      <Group mb="md" gap="sm" wrap="wrap" align="end">
        <SearchField value={search} onChange={setSearch} />
        <VisibilityFilter value={visibility} onChange={setVisibility} />
        <Switch label="Favourites only" checked={favorite} onChange={(event) => setFavorite(event.currentTarget.checked)} />
      </Group>
      <ListStates
        query={agents}
        rows={agents.data?.data}
        loading="Loading agents"
        empty={
          debounced || visibility !== 'all' || favorite
            ? { title: 'No agent matches', detail: 'Change the search or the filters.' }
            : { title: 'No agents yet', detail: 'Create one to chat with it.' }
        }
        paging={{ page, onChange: setPage }}
      >
        {(rows) => (
          <DataTable columns={['Name', 'Model', 'Visibility', { hidden: 'Actions' }]} minWidth={480} highlightOnHover>
            {rows.map((agent) => (
              <Table.Tr key={agent.uuid}>
                <NameCell
                  to={`/agents/${agent.uuid}`}
                  name={agent.name}
                  description={agent.description}
                  before={
                    agent.is_favorite ? (
                      <Text span c="yellow.7" aria-label="Favourite" role="img">
                        ★
                      </Text>
                    ) : null
                  }
                />
                <Table.Td>
                  <Text size="sm">{agent.metadata?.large_language_model ?? 'default'}</Text>
                </Table.Td>
                <Table.Td>
                  <Badge variant="light">{agent.visibility}</Badge>
                </Table.Td>
                <Table.Td>
                  <Button size="xs" variant="light" component={Link} to={`/chat/${agent.uuid}`} aria-label={`Chat with ${agent.name}`}>
                    Chat
                  </Button>
                </Table.Td>
              </Table.Tr>
            ))}
          </DataTable>
        )}
      </ListStates>
    </>
  )
}
