/**
 * The pieces of an answer, whether streamed (./runStream.ts) or stored (./turns.ts): its text,
 * its tool calls as collapsible items (name, arguments, result or error), the knowledge sources it
 * was given and its usage. Everything the model or a user wrote is shown as plain text that wraps
 * anywhere, so a 10,000-character word cannot widen the page.
 */
import { Accordion, Badge, Code, Group, List, Paper, Spoiler, Stack, Text } from '@mantine/core'
import type { ReactNode } from 'react'
import type { AnswerItem, Source, Usage } from './runStream.ts'

/** Text written by a person or a model: kept as written, wrapped anywhere. */
export const userText = { whiteSpace: 'pre-wrap', overflowWrap: 'anywhere', wordBreak: 'break-word' } as const

/** Characters from which a stored text is shown folded, the rest behind a button. */
const FOLD_FROM = 1_500

/**
 * A stored message's text; a very long one folded to a few lines with a button that shows it all,
 * so one pasted document does not push the conversation off the screen.
 */
export function MessageText({ text }: { text: string }) {
  const body = <Text style={userText}>{text}</Text>
  if (text.length < FOLD_FROM) return body
  return (
    <Spoiler maxHeight={240} showLabel="Show the whole message" hideLabel="Show less" transitionDuration={0}>
      {body}
    </Spoiler>
  )
}

/** A JSON value (tool arguments, a result) as indented text. */
function json(value: unknown): string {
  if (typeof value === 'string') return value
  try {
    return JSON.stringify(value, null, 2) ?? 'null'
  } catch {
    return String(value)
  }
}

function ToolCall({ item, pending }: { item: Extract<AnswerItem, { kind: 'tool' }>; pending: boolean }) {
  const state = item.result ? (item.result.isError ? 'failed' : 'done') : pending ? 'running' : 'no result'
  const color = state === 'failed' ? 'red' : state === 'done' ? 'teal' : 'gray'
  return (
    <Accordion variant="contained" chevronPosition="left" radius="sm" transitionDuration={0}>
      <Accordion.Item value={item.id || item.name}>
        <Accordion.Control aria-label={`Tool call ${item.name} (${state})`}>
          <Group gap="xs" wrap="nowrap" style={{ minWidth: 0 }}>
            <Text size="sm" fw={600} truncate="end" style={{ minWidth: 0 }} title={item.name}>
              Tool call: {item.name}
            </Text>
            <Badge size="sm" variant="light" color={color} style={{ flexShrink: 0 }}>
              {state}
            </Badge>
          </Group>
        </Accordion.Control>
        <Accordion.Panel>
          <Stack gap="xs">
            <div>
              <Text size="xs" c="dimmed">
                Arguments
              </Text>
              <Code block style={userText}>
                {json(item.input)}
              </Code>
            </div>
            {item.result ? (
              <div>
                <Text size="xs" c={item.result.isError ? 'red' : 'dimmed'}>
                  {item.result.isError ? 'Error' : 'Result'}
                </Text>
                <Code block style={userText} color={item.result.isError ? 'red.1' : undefined}>
                  {json(item.result.output)}
                </Code>
              </div>
            ) : null}
          </Stack>
        </Accordion.Panel>
      </Accordion.Item>
    </Accordion>
  )
}

/** The answer's text and tool calls in the order they were written. */
export function AnswerItems({ items, pending = false }: { items: AnswerItem[]; pending?: boolean }) {
  return (
    <Stack gap="xs">
      {items.map((item, index) =>
        item.kind === 'text' ? (
          // Text being written stays unfolded: its new words must show.
          pending ? (
            <Text key={index} style={userText}>
              {item.text}
            </Text>
          ) : (
            <MessageText key={index} text={item.text} />
          )
        ) : (
          <ToolCall key={`${item.id}-${index}`} item={item} pending={pending} />
        ),
      )}
    </Stack>
  )
}

/** The knowledge chunks the answer was given, under it. */
export function Sources({ sources }: { sources: Source[] }) {
  if (sources.length === 0) return null
  return (
    <div>
      <Text size="xs" c="dimmed" fw={600}>
        Sources
      </Text>
      <List size="sm" aria-label="Sources">
        {sources.map((source, index) => (
          <List.Item key={`${source.chunkUuid}-${index}`} style={{ overflowWrap: 'anywhere' }}>
            {source.documentName || 'Untitled document'} <Text span size="xs" c="dimmed">(score {source.score.toFixed(2)})</Text>
          </List.Item>
        ))}
      </List>
    </div>
  )
}

/** Tokens and cost of an answer, when known. */
export function UsageLine({ usage, model }: { usage: Usage | null; model?: string | null }) {
  if (!usage || usage.total_tokens === 0) return null
  const cost = usage.cost > 0 ? ` · $${usage.cost.toFixed(6)}` : ''
  return (
    <Text size="xs" c="dimmed" style={{ overflowWrap: 'anywhere' }}>
      {model ? `${model} · ` : ''}
      {usage.prompt_tokens} in, {usage.completion_tokens} out ({usage.total_tokens} tokens){cost}
    </Text>
  )
}

/** A message's frame: who wrote it, then its body. */
export function Bubble({ author, mine, children, busy = false, label }: { author: string; mine: boolean; children: ReactNode; busy?: boolean; label: string }) {
  return (
    <Paper
      component="article"
      aria-label={label}
      aria-busy={busy || undefined}
      withBorder
      p="sm"
      radius="md"
      bg={mine ? 'var(--mantine-color-blue-light)' : undefined}
      style={{ minWidth: 0, maxWidth: '100%', alignSelf: mine ? 'flex-end' : 'stretch', ...(mine ? { marginLeft: 'clamp(0px, 10%, 64px)' } : {}) }}
    >
      <Text size="xs" c="dimmed" fw={600} mb={4} truncate="end" title={author}>
        {author}
      </Text>
      <Stack gap="xs">{children}</Stack>
    </Paper>
  )
}
