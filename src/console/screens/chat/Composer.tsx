/**
 * The message box under a conversation: Enter sends, Shift+Enter starts a new line (and Enter
 * while an input method composes a word does neither). While an answer is being written the
 * Stop button takes the Send button's place; Send is disabled while a message is on its way (and
 * a second click before it shows so joins the first: the hook sends once). The version picker
 * pins the agent's version the run uses (docs/api/versions.md, "Pinned runs"); "Latest" sends none.
 */
import { Button, Group, Select, Stack, Textarea } from '@mantine/core'
import { useState, type FormEvent, type KeyboardEvent } from 'react'

interface Props {
  onSend: (text: string) => Promise<boolean>
  onStop: () => void
  /** An answer is being written: sending waits, Stop is offered. */
  running: boolean
  stopping: boolean
  sending: boolean
  error?: string
  /** The agent's current version: the picker offers 1 to it. */
  currentVersion: number
  /** The pinned version, or null for the latest. */
  version: number | null
  onVersion: (version: number | null) => void
  versionError?: string
}

export function Composer({ onSend, onStop, running, stopping, sending, error, currentVersion, version, onVersion, versionError }: Props) {
  const versions = [
    { value: 'latest', label: `Latest (v${currentVersion})` },
    ...Array.from({ length: currentVersion }, (_, index) => currentVersion - index).map((n) => ({ value: String(n), label: `v${n}` })),
  ]
  const [text, setText] = useState('')
  const canSend = text.trim().length > 0 && !running && !sending
  const send = async () => {
    if (!canSend) return
    if (await onSend(text)) setText('')
  }
  const submit = (event: FormEvent) => {
    event.preventDefault()
    void send()
  }
  const keyDown = (event: KeyboardEvent<HTMLTextAreaElement>) => {
    if (event.key !== 'Enter' || event.shiftKey || event.nativeEvent.isComposing) return
    event.preventDefault()
    void send()
  }
  return (
    <form onSubmit={submit} aria-label="Send a message">
      <Group align="flex-end" gap="xs" wrap="nowrap">
        <Textarea
          label="Message"
          description="Enter sends, Shift+Enter starts a new line"
          placeholder="Write a message"
          autosize
          minRows={2}
          maxRows={8}
          value={text}
          onChange={(event) => setText(event.currentTarget.value)}
          onKeyDown={keyDown}
          error={error}
          style={{ flex: 1, minWidth: 0 }}
          styles={{ input: { overflowWrap: 'anywhere' } }}
        />
        <Stack gap={6} style={{ flexShrink: 0 }}>
          <Select
            label="Version"
            size="xs"
            w={120}
            data={versions}
            value={version === null ? 'latest' : String(version)}
            onChange={(value) => onVersion(!value || value === 'latest' ? null : Number(value))}
            allowDeselect={false}
            error={versionError}
            comboboxProps={{ withinPortal: true }}
          />
          {running ? (
            <Button color="red" variant="light" onClick={onStop} loading={stopping}>
              Stop
            </Button>
          ) : (
            <Button type="submit" disabled={!canSend} loading={sending}>
              Send
            </Button>
          )}
        </Stack>
      </Group>
    </form>
  )
}
