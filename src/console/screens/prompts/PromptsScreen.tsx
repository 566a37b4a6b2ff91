/**
 * Prompts: the list with search and a visibility filter (`prompts.list`, `GET /api/v1/prompts`),
 * each row leading to its edit screen, and "New prompt", a dialog that creates one
 * (`prompts.create`, `POST /api/v1/prompts`) and then opens it, since inputs, model and the run
 * form live on the edit screen.
 */
import { Badge, Button, Group, Table, Text } from '@mantine/core'
import { useDebouncedValue, useDisclosure } from '@mantine/hooks'
import { useState } from 'react'
import { ScreenTitle, SearchField, VisibilityFilter, type VisibilityChoice, useFilter } from '../../ui/ListControls.tsx'
import { DataTable, ListStates, NameCell } from '../../ui/ListTable.tsx'
import { usePrompts, type PromptsInput } from './api.ts'
import { CreatePromptModal } from './CreatePromptModal.tsx'

const dateFormat = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium' })

export default function PromptsScreen() {
  const [page, setPage] = useState(1)
  const [search, setSearch] = useFilter('', setPage)
  const [debounced] = useDebouncedValue(search.trim(), 250)
  const [visibility, setVisibility] = useFilter<VisibilityChoice>('all', setPage)
  const [creating, { open, close }] = useDisclosure(false)
  const input: PromptsInput = {
    page,
    per_page: 20,
    sort: '-created_at',
    ...(debounced ? { search: debounced } : {}),
    ...(visibility !== 'all' ? { visibility } : {}),
  }
  const prompts = usePrompts(input)
  const filtered = Boolean(debounced) || visibility !== 'all'
  return (
    <>
      <ScreenTitle title="Prompts">
        <Button onClick={open}>New prompt</Button>
      </ScreenTitle>
      <CreatePromptModal opened={creating} onClose={close} />
      <Group mb="md" gap="sm" wrap="wrap" align="end">
        <SearchField value={search} onChange={setSearch} />
        <VisibilityFilter value={visibility} onChange={setVisibility} />
      </Group>
      <ListStates
        query={prompts}
        rows={prompts.data?.data}
        loading="Loading prompts"
        empty={
          filtered
            ? { title: 'No prompt matches', detail: 'Change the search or the filter.' }
            : { title: 'No prompts yet', detail: 'Create one: a template with inputs, run with a form.' }
        }
        paging={{ page, onChange: setPage }}
      >
        {(rows) => (
          <DataTable columns={['Name', 'Inputs', 'Visibility', 'Updated']} minWidth={520} highlightOnHover>
            {rows.map((prompt) => (
              <Table.Tr key={prompt.uuid}>
                <NameCell to={`/prompts/${prompt.uuid}`} name={prompt.name} description={prompt.description}>
                  {prompt.profile_photo_config?.emoji ? `${prompt.profile_photo_config.emoji} ` : ''}
                  {prompt.name}
                </NameCell>
                <Table.Td>
                  <Text size="sm" lineClamp={2} style={{ overflowWrap: 'anywhere' }}>
                    {prompt.metadata.input.length ? prompt.metadata.input.map((field) => field.label).join(', ') : 'None'}
                  </Text>
                </Table.Td>
                <Table.Td>
                  <Badge variant="light">{prompt.visibility}</Badge>
                </Table.Td>
                <Table.Td>
                  <Text size="sm">{dateFormat.format(new Date(prompt.updated_at))}</Text>
                </Table.Td>
              </Table.Tr>
            ))}
          </DataTable>
        )}
      </ListStates>
    </>
  )
}
