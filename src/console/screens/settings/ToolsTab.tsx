/**
 * Settings → Tools: the tools agents may call (`tools.list`, searched by name and description),
 * each with its type, method and URL, provider, and whether its calls wait for an approval;
 * created and edited in ./ToolModal.tsx (`tools.create`, `tools.update`), deleted after a
 * confirmation (`tools.delete`, which removes it from agents).
 */
import { Badge, Button, Group, Table, Text } from '@mantine/core'
import { useDebouncedValue } from '@mantine/hooks'
import { useState } from 'react'
import { SearchField, useFilter } from '../../ui/ListControls.tsx'
import { DataTable, ListStates } from '../../ui/ListTable.tsx'
import { useDeleteTool, useToolList, type Tool } from './api.ts'
import { ConfirmModal, EditDeleteButtons, SectionTitle } from './SettingsParts.tsx'
import { ToolModal } from './ToolModal.tsx'

export default function ToolsTab() {
  const [page, setPage] = useState(1)
  const [search, setSearch] = useFilter('', setPage)
  const [debounced] = useDebouncedValue(search.trim(), 300)
  const [dialog, setDialog] = useState<{ tool: Tool | null; key: number } | null>(null)
  const [deleting, setDeleting] = useState<Tool | null>(null)
  const tools = useToolList({ page, per_page: 20, ...(debounced ? { search: debounced } : {}) })
  return (
    <>
      <SectionTitle title="Tools">
        <Button onClick={() => setDialog({ tool: null, key: Date.now() })}>New tool</Button>
      </SectionTitle>
      <Text c="dimmed" size="sm" mb="sm">
        HTTP operations and MCP servers an agent can call. Link them to an agent on its form, with the account each is called with.
      </Text>
      <Group mb="md">
        <SearchField value={search} onChange={setSearch} />
      </Group>
      <ListStates
        query={tools}
        rows={tools.data?.data}
        loading="Loading tools"
        empty={
          debounced
            ? { title: 'No tool matches', detail: 'Try another search.' }
            : { title: 'No tools yet', detail: 'Create one to let agents call an API or an MCP server.' }
        }
        paging={{ page, onChange: setPage }}
      >
        {(rows) => (
          <DataTable columns={['Tool', 'Calls', 'Provider', 'Approval', { hidden: 'Actions' }]} minWidth={820} label="Tools">
            {rows.map((tool) => (
              <Table.Tr key={tool.uuid}>
                <Table.Td style={{ maxWidth: 260 }}>
                  <Text size="sm" fw={600} truncate="end" title={tool.name}>
                    {tool.name}
                  </Text>
                  {tool.description ? (
                    <Text size="xs" c="dimmed" lineClamp={2} style={{ overflowWrap: 'anywhere' }}>
                      {tool.description}
                    </Text>
                  ) : null}
                </Table.Td>
                <Table.Td style={{ maxWidth: 300 }}>
                  <Group gap={4} wrap="nowrap">
                    <Badge size="sm" variant="light" color={tool.type === 'mcp' ? 'grape' : 'blue'}>
                      {tool.type === 'mcp' ? 'MCP' : tool.method}
                    </Badge>
                    <Text size="sm" ff="monospace" truncate="end" title={tool.url} style={{ minWidth: 0 }}>
                      {tool.url}
                    </Text>
                  </Group>
                </Table.Td>
                <Table.Td>{tool.provider?.name ?? '–'}</Table.Td>
                <Table.Td>
                  {tool.requires_approval ? (
                    <Badge color="orange" variant="light">
                      requires approval
                    </Badge>
                  ) : (
                    <Text size="sm" c="dimmed">
                      none
                    </Text>
                  )}
                </Table.Td>
                <Table.Td>
                  <EditDeleteButtons name={tool.name} onEdit={() => setDialog({ tool, key: Date.now() })} onDelete={() => setDeleting(tool)} />
                </Table.Td>
              </Table.Tr>
            ))}
          </DataTable>
        )}
      </ListStates>
      {dialog ? <ToolModal key={dialog.key} tool={dialog.tool} onClose={() => setDialog(null)} /> : null}
      <DeleteTool tool={deleting} onClose={() => setDeleting(null)} />
    </>
  )
}

function DeleteTool({ tool, onClose }: { tool: Tool | null; onClose: () => void }) {
  const remove = useDeleteTool({ onSuccess: () => close() })
  const close = () => {
    remove.reset()
    onClose()
  }
  return (
    <ConfirmModal
      opened={tool !== null}
      title="Delete this tool?"
      confirm="Delete tool"
      pending={remove.isPending}
      error={remove.error}
      onConfirm={() => tool && remove.mutate({ tool_uuid: tool.uuid })}
      onClose={close}
    >
      <b>{tool?.name}</b> is removed from every agent that calls it.
    </ConfirmModal>
  )
}
