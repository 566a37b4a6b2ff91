/**
 * One prompt (`/prompts/:promptUuid`): read with `prompts.retrieve`, edited on the "Edit" tab
 * (`prompts.update`, ./PromptForm.tsx), run on the "Run" tab with a form built from its declared
 * inputs (`runs.prompt`, ./RunPanel.tsx), and deleted after a confirmation (`prompts.delete`).
 * A prompt the caller cannot see, or a permission they lack, is said in words.
 */
import { Anchor, Badge, Button, Group, Modal, Stack, Tabs, Text } from '@mantine/core'
import { useDisclosure } from '@mantine/hooks'
import { notifications } from '@mantine/notifications'
import { useState } from 'react'
import { Link, useNavigate, useParams } from 'react-router'
import { ScreenTitle } from '../../ui/ListControls.tsx'
import { ErrorNotice, Loading } from '../../ui/states.tsx'
import { useDeletePrompt, usePrompt } from './api.ts'
import { PromptForm } from './PromptForm.tsx'
import type { Prompt } from './promptTypes.ts'
import { RunPanel } from './RunPanel.tsx'

export default function PromptEditScreen() {
  const { promptUuid = '' } = useParams()
  const prompt = usePrompt(promptUuid)
  return (
    <>
      <Anchor component={Link} to="/prompts" size="sm">
        ← All prompts
      </Anchor>
      {prompt.isPending ? <Loading label="Loading the prompt" /> : null}
      {prompt.error ? <ErrorNotice error={prompt.error} onRetry={() => void prompt.refetch()} /> : null}
      {prompt.data ? <PromptScreen prompt={prompt.data.data} /> : null}
    </>
  )
}

function PromptScreen({ prompt }: { prompt: Prompt }) {
  const [unsaved, setUnsaved] = useState(false)
  return (
    <>
      <ScreenTitle title={`${prompt.profile_photo_config?.emoji ? `${prompt.profile_photo_config.emoji} ` : ''}${prompt.name}`}>
        <Badge variant="light">{prompt.visibility}</Badge>
        <DeletePrompt prompt={prompt} />
      </ScreenTitle>
      {prompt.user && !prompt.is_owner ? (
        <Text size="sm" c="dimmed" mb="sm" style={{ overflowWrap: 'anywhere' }}>
          Shared by {prompt.user.name}
        </Text>
      ) : null}
      <Tabs defaultValue="edit" keepMounted>
        <Tabs.List mb="md">
          <Tabs.Tab value="edit">Edit</Tabs.Tab>
          <Tabs.Tab value="run">Run</Tabs.Tab>
        </Tabs.List>
        <Tabs.Panel value="edit">
          <PromptForm prompt={prompt} onDirtyChange={setUnsaved} />
        </Tabs.Panel>
        <Tabs.Panel value="run">
          {/* A saved change of the inputs starts a fresh run form. */}
          <RunPanel key={prompt.updated_at} prompt={prompt} unsaved={unsaved} />
        </Tabs.Panel>
      </Tabs>
    </>
  )
}

function DeletePrompt({ prompt }: { prompt: Prompt }) {
  const navigate = useNavigate()
  const [opened, { open, close }] = useDisclosure(false)
  const remove = useDeletePrompt({
    onSuccess: () => {
      notifications.show({ message: `Prompt "${prompt.name}" deleted` })
      void navigate('/prompts')
    },
  })
  return (
    <>
      <Button color="red" variant="light" onClick={open}>
        Delete
      </Button>
      <Modal opened={opened} onClose={close} title="Delete this prompt?">
        <Stack>
          <Text style={{ overflowWrap: 'anywhere' }}>
            “{prompt.name}” will be deleted for everyone it is shared with. Runs already made keep their answers.
          </Text>
          {remove.error ? <ErrorNotice error={remove.error} /> : null}
          <Group justify="flex-end">
            <Button variant="default" onClick={close}>
              Cancel
            </Button>
            <Button color="red" loading={remove.isPending} onClick={() => remove.mutate({ prompt_uuid: prompt.uuid })}>
              Delete prompt
            </Button>
          </Group>
        </Stack>
      </Modal>
    </>
  )
}
