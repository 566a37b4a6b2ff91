/**
 * What a run in a thread sends the model before the new input (docs/api/runs.md):
 * stored messages as the AI SDK's model messages, and the newest of them that fit the context
 * window (src/runs/runs.service.ts, pure functions).
 */
import type { ModelMessage } from 'ai'
import { describe, expect, it } from 'vitest'
import type { ResolvedModel } from '../src/models/registry.ts'
import { fitWindow, toModelMessages } from '../src/runs/runs.service.ts'

/** A model as far as the window arithmetic reads it. */
const modelWith = (contextWindow: number, maxOutputTokens: number) => ({ llm: { contextWindow, maxOutputTokens } }) as unknown as ResolvedModel

describe('toModelMessages', () => {
  it('keeps user, system and plain assistant text as it is', () => {
    expect(
      toModelMessages([
        { role: 'system', content: 'Be brief.', parts: [] },
        { role: 'user', content: 'Hi', parts: [{ type: 'text', text: 'Hi' }] },
        { role: 'assistant', content: 'Hello', parts: [{ type: 'text', text: 'Hello' }] },
      ]),
    ).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'Hi' },
      { role: 'assistant', content: 'Hello' },
    ])
  })

  it('pairs an assistant tool call with its result, errors as error text', () => {
    const messages = toModelMessages([
      {
        role: 'assistant',
        content: 'Looking',
        parts: [
          { type: 'text', text: 'Looking' },
          { type: 'tool-call', tool_call_id: 'c1', tool_name: 'weather', input: { city: 'Oslo' } },
          { type: 'tool-call', tool_call_id: 'c2', tool_name: 'nope', input: {} },
        ],
      },
      {
        role: 'tool',
        content: '',
        parts: [
          { type: 'tool-result', tool_call_id: 'c1', tool_name: 'weather', output: { forecast: 'sunny' }, is_error: false },
          { type: 'tool-result', tool_call_id: 'c2', tool_name: 'nope', output: { error: 'unknown tool' }, is_error: true },
        ],
      },
    ])
    expect(messages).toEqual([
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Looking' },
          { type: 'tool-call', toolCallId: 'c1', toolName: 'weather', input: { city: 'Oslo' } },
          { type: 'tool-call', toolCallId: 'c2', toolName: 'nope', input: {} },
        ],
      },
      {
        role: 'tool',
        content: [
          { type: 'tool-result', toolCallId: 'c1', toolName: 'weather', output: { type: 'json', value: { forecast: 'sunny' } } },
          { type: 'tool-result', toolCallId: 'c2', toolName: 'nope', output: { type: 'error-text', value: '{"error":"unknown tool"}' } },
        ],
      },
    ])
  })

  it('leaves out a tool message without results and parts it does not know', () => {
    expect(toModelMessages([{ role: 'tool', content: '', parts: [{ type: 'image', url: 'x' }] }])).toEqual([])
  })
})

describe('fitWindow', () => {
  // Each message below costs ceil(JSON length of its content / 4) tokens: 'x'.repeat(38) -> 10.
  const text = (role: 'user' | 'assistant', n: number): ModelMessage => ({ role, content: String(n).padEnd(38, 'x') })
  const history = [text('user', 1), text('assistant', 2), text('user', 3), text('assistant', 4)]

  it('keeps everything that fits', () => {
    expect(fitWindow(history, modelWith(1000, 100), undefined, 'new')).toEqual(history)
  })

  it('keeps the newest messages that fit beside the system prompt, the input and the answer', () => {
    // 100 - 50 (answer) - 1 (system "") - 2 (input "new") = 47 tokens: all four (40) fit.
    expect(fitWindow(history, modelWith(100, 50), undefined, 'new')).toHaveLength(4)
    // 80 - 50 - 1 - 2 = 27 tokens: the newest two messages (20).
    expect(fitWindow(history, modelWith(80, 50), undefined, 'new')).toEqual(history.slice(2))
    // No room at all: nothing of the history.
    expect(fitWindow(history, modelWith(50, 50), undefined, 'new')).toEqual([])
  })

  it('never starts on a tool result whose call was cut off', () => {
    const withTool: ModelMessage[] = [
      // About 60 tokens: does not fit once the two newer messages are in.
      { role: 'assistant', content: [{ type: 'tool-call', toolCallId: 'c', toolName: 't', input: { pad: 'x'.repeat(200) } }] },
      // About 22 tokens: fits, but without its call it must not be sent.
      { role: 'tool', content: [{ type: 'tool-result', toolCallId: 'c', toolName: 't', output: { type: 'json', value: 1 } }] },
      text('user', 5),
    ]
    // 120 - 50 - 1 - 2 = 67 tokens: user (10) and the tool result (22) fit, the call does not.
    expect(fitWindow(withTool, modelWith(120, 50), undefined, 'new')).toEqual([text('user', 5)])
  })
})
