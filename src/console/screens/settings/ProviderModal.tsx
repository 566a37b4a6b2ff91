/**
 * A custom provider's dialog (`providers.create`, `providers.update`; docs/api/resources.md,
 * "Providers"): name, description, type (fixed once created), driver, base URL, how the secret is
 * sent (`auth_scheme`, with the header or query parameter's name for `header` and `query`) and
 * visibility. The service's 400 is shown at the fields it names.
 */
import { Button, Group, Modal, Select, Stack, Textarea, TextInput } from '@mantine/core'
import { useState, type FormEvent } from 'react'
import { problemOf } from '../../lib/api.ts'
import { fieldError } from '../../ui/forms.ts'
import { FormProblem } from '../../ui/FormProblem.tsx'
import { useCreateProvider, useUpdateProvider, type Provider } from './api.ts'
import {
  AUTH_SCHEME_LABELS,
  AUTH_SCHEMES,
  DRIVERS,
  PARAMETER_SCHEMES,
  PROVIDER_TYPES,
  VISIBILITIES,
  type AuthScheme,
  type ProviderDriver,
  type ProviderType,
  type Visibility,
} from './settings-model.ts'

const FIELDS = ['name', 'slug', 'description', 'type', 'driver', 'base_url', 'auth_scheme', 'auth_parameter', 'visibility']

interface Draft {
  name: string
  description: string
  type: ProviderType
  driver: ProviderDriver
  baseUrl: string
  authScheme: AuthScheme
  authParameter: string
  visibility: Visibility
}

const draftOf = (provider: Provider | null): Draft =>
  provider
    ? {
        name: provider.name,
        description: provider.description,
        type: provider.type,
        driver: provider.driver === 'local' ? 'openai-compatible' : provider.driver,
        baseUrl: provider.base_url ?? '',
        authScheme: provider.auth_scheme,
        authParameter: provider.auth_parameter ?? '',
        visibility: provider.visibility,
      }
    : {
        name: '',
        description: '',
        type: 'llm',
        driver: 'openai-compatible',
        baseUrl: '',
        authScheme: 'bearer',
        authParameter: '',
        visibility: 'workspace',
      }

/** `provider` null: a new one. The dialog is mounted per opening (its `key`), so the draft starts afresh. */
export function ProviderModal({ provider, onClose }: { provider: Provider | null; onClose: () => void }) {
  const [draft, setDraft] = useState(() => draftOf(provider))
  const create = useCreateProvider({ onSuccess: onClose })
  const update = useUpdateProvider({ onSuccess: onClose })
  const mutation = provider ? update : create
  const problem = mutation.error ? problemOf(mutation.error) : null
  const set = (patch: Partial<Draft>) => setDraft({ ...draft, ...patch })
  const needsParameter = PARAMETER_SCHEMES.includes(draft.authScheme)
  const submit = (event: FormEvent) => {
    event.preventDefault()
    const body = {
      name: draft.name,
      description: draft.description.trim() || null,
      driver: draft.driver,
      base_url: draft.baseUrl.trim(),
      auth_scheme: draft.authScheme,
      ...(needsParameter ? { auth_parameter: draft.authParameter.trim() } : {}),
      visibility: draft.visibility,
    }
    if (provider) update.mutate({ provider_uuid: provider.uuid, ...body })
    else create.mutate({ ...body, type: draft.type })
  }
  return (
    <Modal opened onClose={onClose} title={provider ? `Edit ${provider.name}` : 'New provider'} size="lg">
      <form onSubmit={submit} noValidate>
        <Stack>
          <FormProblem problem={problem} fields={FIELDS} />
          <TextInput
            label="Name"
            required
            data-autofocus
            value={draft.name}
            onChange={(e) => set({ name: e.currentTarget.value })}
            error={fieldError(problem, 'name') ?? fieldError(problem, 'slug')}
          />
          <Textarea
            label="Description"
            autosize
            minRows={1}
            value={draft.description}
            onChange={(e) => set({ description: e.currentTarget.value })}
            error={fieldError(problem, 'description')}
          />
          <Group grow align="flex-start">
            <Select
              label="Type"
              description={provider ? 'Fixed once created' : 'Models (llm) or tools'}
              data={PROVIDER_TYPES.map((type) => ({ value: type, label: type === 'llm' ? 'Language models (llm)' : 'Tools' }))}
              value={draft.type}
              onChange={(value) => {
                const type = PROVIDER_TYPES.find((t) => t === value) ?? 'llm'
                set({ type, driver: DRIVERS[type][0] })
              }}
              allowDeselect={false}
              disabled={Boolean(provider)}
              error={fieldError(problem, 'type')}
              comboboxProps={{ withinPortal: true }}
            />
            <Select
              label="Driver"
              description="The protocol it speaks"
              data={[...DRIVERS[draft.type]]}
              value={draft.driver}
              onChange={(value) => set({ driver: DRIVERS[draft.type].find((d) => d === value) ?? DRIVERS[draft.type][0] })}
              allowDeselect={false}
              error={fieldError(problem, 'driver')}
              comboboxProps={{ withinPortal: true }}
            />
          </Group>
          <TextInput
            label="Base URL"
            required
            type="url"
            placeholder="https://api.example.com/v1"
            value={draft.baseUrl}
            onChange={(e) => set({ baseUrl: e.currentTarget.value })}
            error={fieldError(problem, 'base_url')}
          />
          <Group grow align="flex-start">
            <Select
              label="How the secret is sent"
              data={AUTH_SCHEMES.map((scheme) => ({ value: scheme, label: AUTH_SCHEME_LABELS[scheme] }))}
              value={draft.authScheme}
              onChange={(value) => set({ authScheme: AUTH_SCHEMES.find((s) => s === value) ?? 'bearer' })}
              allowDeselect={false}
              error={fieldError(problem, 'auth_scheme')}
              comboboxProps={{ withinPortal: true }}
            />
            {needsParameter ? (
              <TextInput
                label={draft.authScheme === 'header' ? 'Header name' : 'Query parameter name'}
                required
                placeholder={draft.authScheme === 'header' ? 'X-Api-Key' : 'api_key'}
                value={draft.authParameter}
                onChange={(e) => set({ authParameter: e.currentTarget.value })}
                error={fieldError(problem, 'auth_parameter')}
              />
            ) : null}
          </Group>
          <Select
            label="Visibility"
            data={[...VISIBILITIES]}
            value={draft.visibility}
            onChange={(value) => set({ visibility: VISIBILITIES.find((v) => v === value) ?? 'workspace' })}
            allowDeselect={false}
            error={fieldError(problem, 'visibility')}
            comboboxProps={{ withinPortal: true }}
          />
          <Group justify="flex-end">
            <Button variant="default" onClick={onClose}>
              Cancel
            </Button>
            <Button type="submit" loading={mutation.isPending}>
              {provider ? 'Save provider' : 'Create provider'}
            </Button>
          </Group>
        </Stack>
      </form>
    </Modal>
  )
}
