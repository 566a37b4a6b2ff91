/**
 * The "New token" dialog of the access tokens screen: name, expiry date, workspace and abilities
 * (`accessTokens.create`, `POST /api/v1/access-tokens`). The service answers the plaintext once,
 * so the dialog then shows it with a copy button and a warning, and forgets it when closed.
 */
import { Alert, Button, CopyButton, Group, Modal, Radio, Select, Stack, Textarea, TextInput } from '@mantine/core'
import { useState, type FormEvent } from 'react'
import { problemOf, type RouterInputs } from '../../lib/api.ts'
import { useSession } from '../../lib/session.tsx'
import { fieldError } from '../../ui/forms.ts'
import { FormProblem } from '../../ui/FormProblem.tsx'
import { useCreateToken } from './api.ts'

type CreateInput = RouterInputs['accessTokens']['create']

/** Mantine's Select cannot hold '' as a value: "every workspace" is this sentinel. */
const ANY_WORKSPACE = '__any__'

const EMPTY = { name: '', expires: '', workspace: ANY_WORKSPACE, abilities: 'write' as 'read' | 'write' }

/** Today as `YYYY-MM-DD` in the browser's zone: the earliest expiry the date field offers. */
function today(): string {
  const now = new Date()
  return `${now.getFullYear()}-${String(now.getMonth() + 1).padStart(2, '0')}-${String(now.getDate()).padStart(2, '0')}`
}

/** The request: the token expires at the end of the chosen day in the browser's zone. */
function toInput(form: typeof EMPTY): CreateInput {
  return {
    name: form.name,
    abilities: form.abilities === 'read' ? ['read'] : ['read', 'write'],
    ...(form.expires ? { expires_at: new Date(`${form.expires}T23:59:59`).toISOString() } : {}),
    ...(form.workspace !== ANY_WORKSPACE ? { workspace_uuid: form.workspace } : {}),
  }
}

export function CreateTokenModal({ opened, onClose }: { opened: boolean; onClose: () => void }) {
  const { workspaces } = useSession()
  const [form, setForm] = useState(EMPTY)
  const create = useCreateToken()
  const problem = create.error ? problemOf(create.error) : null
  const created = create.data?.data
  // The plaintext is dropped once the dialog has closed (not before: its closing would show the form again).
  const forget = () => {
    create.reset()
    setForm(EMPTY)
  }
  const submit = (event: FormEvent) => {
    event.preventDefault()
    create.mutate(toInput(form))
  }
  return (
    <Modal
      opened={opened}
      onClose={onClose}
      onExitTransitionEnd={forget}
      title={created ? 'Token created' : 'New application token'}
      size="lg"
      closeOnClickOutside={!created}
    >
      {created ? (
        <Stack>
          <Alert color="yellow" title="Copy it now" role="alert">
            This is the only time the token is shown. Keep it somewhere safe: anyone holding it acts as you
            {created.abilities.includes('write') ? '' : ' (reading only)'}.
          </Alert>
          <Textarea
            label={`Your new token “${created.name}”`}
            readOnly
            autosize
            minRows={2}
            value={created.access_token}
            onFocus={(e) => e.currentTarget.select()}
            styles={{ input: { fontFamily: 'var(--mantine-font-family-monospace)', wordBreak: 'break-all' } }}
          />
          <Group justify="space-between">
            <CopyButton value={created.access_token}>
              {({ copied, copy }) => (
                <Button variant={copied ? 'filled' : 'light'} color={copied ? 'teal' : undefined} onClick={copy}>
                  {copied ? 'Copied' : 'Copy token'}
                </Button>
              )}
            </CopyButton>
            <Button onClick={onClose}>Done</Button>
          </Group>
        </Stack>
      ) : (
        <form onSubmit={submit} noValidate>
          <Stack>
            <FormProblem problem={problem} fields={['name', 'expires_at', 'workspace_uuid', 'abilities']} />
            <TextInput
              label="Name"
              description="What the token is for, e.g. the integration that uses it"
              required
              data-autofocus
              value={form.name}
              onChange={(e) => setForm({ ...form, name: e.currentTarget.value })}
              error={fieldError(problem, 'name')}
            />
            <TextInput
              label="Expires on"
              description="Leave empty for a token that does not expire"
              type="date"
              min={today()}
              value={form.expires}
              onChange={(e) => setForm({ ...form, expires: e.currentTarget.value })}
              error={fieldError(problem, 'expires_at')}
            />
            <Select
              label="Workspace"
              description="A token bound to one workspace works only there"
              data={[
                { value: ANY_WORKSPACE, label: 'Every workspace of mine' },
                ...workspaces.map((w) => ({ value: w.uuid, label: w.name })),
              ]}
              value={form.workspace}
              onChange={(value) => value && setForm({ ...form, workspace: value })}
              allowDeselect={false}
              error={fieldError(problem, 'workspace_uuid')}
              comboboxProps={{ withinPortal: true }}
            />
            <Radio.Group
              label="Abilities"
              value={form.abilities}
              onChange={(value) => setForm({ ...form, abilities: value as 'read' | 'write' })}
              error={fieldError(problem, 'abilities')}
            >
              <Stack gap="xs" mt="xs">
                <Radio value="write" label="Read and write" />
                <Radio value="read" label="Read only (every change is refused)" />
              </Stack>
            </Radio.Group>
            <Group justify="flex-end">
              <Button variant="default" onClick={onClose}>
                Cancel
              </Button>
              <Button type="submit" loading={create.isPending}>
                Create token
              </Button>
            </Group>
          </Stack>
        </form>
      )}
    </Modal>
  )
}
