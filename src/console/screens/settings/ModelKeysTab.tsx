/**
 * Settings → Model keys: the models and whether each has a credential here
 * (`largeLanguageModels.list`), the accounts holding credentials (`accounts.list`, `.create`,
 * `.update`, `.delete`: the secret is a password field and only the service's masked hint is shown
 * after), and the providers (`providers.list`; custom ones created, edited and deleted with
 * `providers.create`, `.update`, `.delete`; the built-ins are read-only).
 *
 * A model without a credential has an "Add a key" button opening a new account for its provider.
 */
import { Badge, Button, Group, Table, Text } from '@mantine/core'
import { useState } from 'react'
import { DataTable, ListStates } from '../../ui/ListTable.tsx'
import { AccountModal } from './AccountModal.tsx'
import { useAccountList, useDeleteAccount, useDeleteProvider, useModelList, useProviders, type Account, type Provider } from './api.ts'
import { ProviderModal } from './ProviderModal.tsx'
import { ConfirmModal, EditDeleteButtons, SectionTitle } from './SettingsParts.tsx'

/** What the account dialog is open for: an account, or a new one (for a provider). */
type AccountDialog = { account: Account | null; providerUuid?: string; key: number } | null
type ProviderDialog = { provider: Provider | null; key: number } | null

export default function ModelKeysTab() {
  const [accountDialog, setAccountDialog] = useState<AccountDialog>(null)
  const [providerDialog, setProviderDialog] = useState<ProviderDialog>(null)
  const [deletingAccount, setDeletingAccount] = useState<Account | null>(null)
  const [deletingProvider, setDeletingProvider] = useState<Provider | null>(null)
  const openAccount = (account: Account | null, providerUuid?: string) => setAccountDialog({ account, providerUuid, key: Date.now() })
  return (
    <>
      <Text c="dimmed" size="sm">
        A model runs when a key for its provider is stored here (an account), or when the server has one of its own.
      </Text>
      <Models onAddKey={(providerUuid) => openAccount(null, providerUuid)} />
      <Accounts onEdit={openAccount} onDelete={setDeletingAccount} />
      <Providers onEdit={(provider) => setProviderDialog({ provider, key: Date.now() })} onDelete={setDeletingProvider} />
      {accountDialog ? (
        <AccountModal
          key={accountDialog.key}
          account={accountDialog.account}
          providerUuid={accountDialog.providerUuid}
          onClose={() => setAccountDialog(null)}
        />
      ) : null}
      {providerDialog ? (
        <ProviderModal key={providerDialog.key} provider={providerDialog.provider} onClose={() => setProviderDialog(null)} />
      ) : null}
      <DeleteAccount account={deletingAccount} onClose={() => setDeletingAccount(null)} />
      <DeleteProvider provider={deletingProvider} onClose={() => setDeletingProvider(null)} />
    </>
  )
}

function Models({ onAddKey }: { onAddKey: (providerUuid: string) => void }) {
  const [page, setPage] = useState(1)
  const models = useModelList({ page, per_page: 20, sort: 'name' })
  return (
    <>
      <SectionTitle title="Models" />
      <ListStates
        query={models}
        rows={models.data?.data}
        loading="Loading models"
        empty={{ title: 'No models' }}
        paging={{ page, onChange: setPage }}
      >
        {(rows) => (
          <DataTable columns={['Model', 'Provider', 'Credential']} minWidth={560} label="Models">
            {rows.map((model) => (
              <Table.Tr key={model.uuid}>
                <Table.Td style={{ maxWidth: 260 }}>
                  <Text size="sm" fw={600} truncate="end" title={model.name}>
                    {model.name}
                  </Text>
                  <Text size="xs" c="dimmed" ff="monospace" truncate="end" title={model.slug}>
                    {model.slug}
                  </Text>
                </Table.Td>
                <Table.Td>{model.provider.name}</Table.Td>
                <Table.Td>
                  {model.is_available ? (
                    <Badge color="green" variant="light">
                      has a credential
                    </Badge>
                  ) : (
                    <Group gap="xs" wrap="nowrap">
                      <Badge color="gray" variant="light">
                        no credential
                      </Badge>
                      <Button
                        size="xs"
                        variant="light"
                        aria-label={`Add a key for ${model.name}`}
                        onClick={() => onAddKey(model.provider.uuid)}
                      >
                        Add a key
                      </Button>
                    </Group>
                  )}
                </Table.Td>
              </Table.Tr>
            ))}
          </DataTable>
        )}
      </ListStates>
    </>
  )
}

function Accounts({ onEdit, onDelete }: { onEdit: (account: Account | null) => void; onDelete: (account: Account) => void }) {
  const [page, setPage] = useState(1)
  const accounts = useAccountList({ page, per_page: 20 })
  return (
    <>
      <SectionTitle title="Accounts">
        <Button onClick={() => onEdit(null)}>New account</Button>
      </SectionTitle>
      <ListStates
        query={accounts}
        rows={accounts.data?.data}
        loading="Loading accounts"
        empty={{ title: 'No accounts', detail: 'Add one with the API key of a provider.' }}
        paging={{ page, onChange: setPage }}
      >
        {(rows) => (
          <DataTable columns={['Account', 'Provider', 'Secret', 'Visibility', { hidden: 'Actions' }]} minWidth={720} label="Accounts">
            {rows.map((account) => (
              <Table.Tr key={account.uuid}>
                <Table.Td style={{ maxWidth: 240 }}>
                  <Text size="sm" fw={600} truncate="end" title={account.name}>
                    {account.name}
                  </Text>
                </Table.Td>
                <Table.Td>{account.provider.name}</Table.Td>
                <Table.Td>
                  <Text size="sm" ff="monospace" c={account.has_secret ? undefined : 'dimmed'}>
                    {account.has_secret ? (account.secret_hint ?? '****') : 'none'}
                  </Text>
                </Table.Td>
                <Table.Td>{account.visibility}</Table.Td>
                <Table.Td>
                  <EditDeleteButtons name={account.name} onEdit={() => onEdit(account)} onDelete={() => onDelete(account)} />
                </Table.Td>
              </Table.Tr>
            ))}
          </DataTable>
        )}
      </ListStates>
    </>
  )
}

function Providers({ onEdit, onDelete }: { onEdit: (provider: Provider | null) => void; onDelete: (provider: Provider) => void }) {
  const [page, setPage] = useState(1)
  const providers = useProviders({ page, per_page: 20, sort: 'name' })
  return (
    <>
      <SectionTitle title="Providers">
        <Button variant="light" onClick={() => onEdit(null)}>
          New provider
        </Button>
      </SectionTitle>
      <ListStates
        query={providers}
        rows={providers.data?.data}
        loading="Loading providers"
        empty={{ title: 'No providers' }}
        paging={{ page, onChange: setPage }}
      >
        {(rows) => (
          <DataTable columns={['Provider', 'Type', 'Base URL', 'Secret sent as', { hidden: 'Actions' }]} minWidth={760} label="Providers">
            {rows.map((provider) => (
              <Table.Tr key={provider.uuid}>
                <Table.Td style={{ maxWidth: 220 }}>
                  <Group gap={4} wrap="nowrap">
                    <Text size="sm" fw={600} truncate="end" title={provider.name}>
                      {provider.name}
                    </Text>
                    {provider.is_builtin ? (
                      <Badge size="xs" variant="light">
                        built-in
                      </Badge>
                    ) : null}
                  </Group>
                  <Text size="xs" c="dimmed" ff="monospace">
                    {provider.slug}
                  </Text>
                </Table.Td>
                <Table.Td>
                  {provider.type} · {provider.driver}
                </Table.Td>
                <Table.Td style={{ maxWidth: 220 }}>
                  <Text size="sm" ff="monospace" truncate="end" title={provider.base_url ?? undefined}>
                    {provider.base_url ?? '–'}
                  </Text>
                </Table.Td>
                <Table.Td>
                  {provider.auth_scheme}
                  {provider.auth_parameter ? ` (${provider.auth_parameter})` : ''}
                </Table.Td>
                <Table.Td>
                  {provider.is_builtin ? null : (
                    <EditDeleteButtons name={provider.name} onEdit={() => onEdit(provider)} onDelete={() => onDelete(provider)} />
                  )}
                </Table.Td>
              </Table.Tr>
            ))}
          </DataTable>
        )}
      </ListStates>
    </>
  )
}

function DeleteAccount({ account, onClose }: { account: Account | null; onClose: () => void }) {
  const remove = useDeleteAccount({ onSuccess: () => close() })
  const close = () => {
    remove.reset()
    onClose()
  }
  return (
    <ConfirmModal
      opened={account !== null}
      title="Delete this account?"
      confirm="Delete account"
      pending={remove.isPending}
      error={remove.error}
      onConfirm={() => account && remove.mutate({ account_uuid: account.uuid })}
      onClose={close}
    >
      The key of <b>{account?.name}</b> is forgotten, and agents' tools bound to it lose their account.
    </ConfirmModal>
  )
}

function DeleteProvider({ provider, onClose }: { provider: Provider | null; onClose: () => void }) {
  const remove = useDeleteProvider({ onSuccess: () => close() })
  const close = () => {
    remove.reset()
    onClose()
  }
  return (
    <ConfirmModal
      opened={provider !== null}
      title="Delete this provider?"
      confirm="Delete provider"
      pending={remove.isPending}
      error={remove.error}
      onConfirm={() => provider && remove.mutate({ provider_uuid: provider.uuid })}
      onClose={close}
    >
      <b>{provider?.name}</b> is deleted with its accounts; its tools keep working without a provider.
    </ConfirmModal>
  )
}
