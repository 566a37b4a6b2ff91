/**
 * The message box under a conversation: Enter sends, Shift+Enter starts a new line (and Enter
 * while an input method composes a word does neither). While an answer is being written the
 * Stop button takes the Send button's place.
 */
import { Button, Group, Textarea } from '@mantine/core'
import { useState, type FormEvent, type KeyboardEvent } from 'react'

interface Props {
  onSend: (text: string) => Promise<boolean>
  onStop: () => void
  /** An answer is being written: sending waits, Stop is offered. */
  running: boolean
  stopping: boolean
  sending: boolean
  error?: string
}

export function Composer({ onSend, onStop, running, stopping, sending, error }: Props) {
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
        {running ? (
          <Button color="red" variant="light" onClick={onStop} loading={stopping}>
            Stop
          </Button>
        ) : (
          <Button type="submit" disabled={!canSend} loading={sending}>
            Send
          </Button>
        )}
      </Group>
    </form>
  )
}
