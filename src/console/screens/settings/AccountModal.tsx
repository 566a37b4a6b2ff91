/**
 * An account's dialog (`accounts.create`, `accounts.update`; docs/api/resources.md, "Accounts"):
 * its name, the provider it holds credentials for (picked by name), the secret (a password field,
 * write-only: the service answers only its masked hint, which is all an edit shows; left empty on
 * an edit it is kept, and it can be removed), a base URL overriding the provider's, and visibility.
 * The typed secret lives in this dialog's state only, which is dropped when it closes.
 */
import { Button, Checkbox, Group, Modal, PasswordInput, Select, Stack, Text, TextInput } from '@mantine/core'
import { useState, type FormEvent } from 'react'
import { problemOf } from '../../lib/api.ts'
import { fieldError } from '../../ui/forms.ts'
import { FormProblem } from '../../ui/FormProblem.tsx'
import { useCreateAccount, useProviders, useUpdateAccount, type Account } from './api.ts'
import { ACCOUNT_VISIBILITIES, type AccountVisibility } from './settings-model.ts'

const FIELDS = ['name', 'provider_uuid', 'secret', 'base_url', 'visibility']

/** `account` null: a new one, for `providerUuid` when given. Mounted per opening, so nothing typed outlives it. */
export function AccountModal({ account, providerUuid, onClose }: { account: Account | null; providerUuid?: string; onClose: () => void }) {
  const providers = useProviders()
  const [name, setName] = useState(account?.name ?? '')
  const [provider, setProvider] = useState<string | null>(account?.provider.uuid ?? providerUuid ?? null)
  const [secret, setSecret] = useState('')
  const [removeSecret, setRemoveSecret] = useState(false)
  const [baseUrl, setBaseUrl] = useState(account?.base_url ?? '')
  const [visibility, setVisibility] = useState<AccountVisibility>(account?.visibility ?? 'workspace')
  const create = useCreateAccount({ onSuccess: onClose })
  const update = useUpdateAccount({ onSuccess: onClose })
  const mutation = account ? update : create
  const problem = mutation.error ? problemOf(mutation.error) : null
  const options = (providers.data?.data ?? []).map((p) => ({
    value: p.uuid,
    label: `${p.name} (${p.type === 'llm' ? 'models' : 'tools'})`,
  }))
  if (account && !options.some((option) => option.value === account.provider.uuid)) {
    options.push({ value: account.provider.uuid, label: account.provider.name })
  }
  const submit = (event: FormEvent) => {
    event.preventDefault()
    const common = { name, base_url: baseUrl.trim() || null, visibility }
    if (account) {
      update.mutate({
        account_uuid: account.uuid,
        ...common,
        ...(provider && provider !== account.provider.uuid ? { provider_uuid: provider } : {}),
        ...(removeSecret ? { secret: null } : secret ? { secret } : {}),
      })
    } else {
      // An empty provider is sent as such, so the service's 400 names the field.
      create.mutate({ ...common, provider_uuid: provider ?? '', ...(secret ? { secret } : {}) })
    }
  }
  return (
    <Modal opened onClose={onClose} title={account ? `Edit ${account.name}` : 'New account'} size="lg">
      <form onSubmit={submit} noValidate autoComplete="off">
        <Stack>
          <FormProblem problem={problem} fields={FIELDS} />
          <TextInput
            label="Name"
            required
            data-autofocus
            placeholder="Team OpenAI key"
            value={name}
            onChange={(e) => setName(e.currentTarget.value)}
            error={fieldError(problem, 'name')}
          />
          <Select
            label="Provider"
            required
            searchable
            placeholder={providers.isPending ? 'Loading providers…' : 'Choose a provider'}
            data={options}
            value={provider}
            onChange={setProvider}
            nothingFoundMessage="No provider matches"
            error={fieldError(problem, 'provider_uuid') ?? (providers.error ? 'Could not load the providers; try again later.' : undefined)}
            comboboxProps={{ withinPortal: true }}
          />
          <PasswordInput
            label="Secret"
            description={
              account?.has_secret
                ? `Stored: ${account.secret_hint ?? '****'}. Leave empty to keep it; the service never shows it again.`
                : 'The API key. Once saved, only a masked hint of it is ever shown.'
            }
            autoComplete="new-password"
            value={secret}
            disabled={removeSecret}
            onChange={(e) => setSecret(e.currentTarget.value)}
            error={fieldError(problem, 'secret')}
          />
          {account?.has_secret ? (
            <Checkbox label="Remove the stored secret" checked={removeSecret} onChange={(e) => setRemoveSecret(e.currentTarget.checked)} />
          ) : null}
          <TextInput
            label="Base URL"
            description="Optional: overrides the provider's"
            type="url"
            value={baseUrl}
            onChange={(e) => setBaseUrl(e.currentTarget.value)}
            error={fieldError(problem, 'base_url')}
          />
          <Select
            label="Visibility"
            description="Private: your runs only. Workspace: every member's runs use it."
            data={ACCOUNT_VISIBILITIES.map((v) => ({ value: v, label: v }))}
            value={visibility}
            onChange={(value) => setVisibility(ACCOUNT_VISIBILITIES.find((v) => v === value) ?? 'workspace')}
            allowDeselect={false}
            error={fieldError(problem, 'visibility')}
            comboboxProps={{ withinPortal: true }}
          />
          <Text size="xs" c="dimmed">
            Workspace owners and admins see and manage every account of the workspace, never its secret.
          </Text>
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={mutation.isPending}>
              {account ? 'Save account' : 'Add account'}
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  )
}
