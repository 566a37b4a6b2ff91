/**
 * Unit tests of the agent system prompt template (src/runs/system-prompt.ts).
 */
import { describe, expect, it } from 'vitest'
import { composeSystemPrompt, DISC_DESCRIPTIONS } from '../src/runs/system-prompt.ts'

const FULL = {
  name: 'Ada',
  instruction: 'Help customers with billing questions.\nAsk for the invoice number first.',
  metadata: {
    role: 'Billing support specialist',
    goal_statement: 'Resolve billing questions in one conversation.',
    backstory: 'You worked ten years in accounts receivable.',
    base_instructions: 'Answer in the language of the user.',
    guardrails: "Never share another customer's data.\nNever promise refunds.",
    tone_of_voice: 'Friendly and concise.',
    disc_personality: 'steady',
    greetings: 'Hi, I am Ada from billing. How can I help?',
    conversation_starters: ['Why was I charged twice?', 'How do I update my card?'],
    openai_voice: 'alloy',
    large_language_model: 'gpt-4o-mini',
    memory: true,
    knowledge: false,
    web_search: false,
    favourite_colour: 'teal',
  },
}

const agent = (metadata: Record<string, unknown> = {}, instruction = '') => ({ name: 'Ada', instruction, metadata })

describe('composeSystemPrompt', () => {
  it('composes every field in the documented order (full example)', () => {
    const prompt = composeSystemPrompt(FULL, {
      memories: ['Works at Globex.', 'Prefers email over phone.'],
      now: new Date('2026-11-21T14:03:59.000Z'),
    })
    expect(prompt).toBe(`You are Ada.
Your role: Billing support specialist

Your goal:
Resolve billing questions in one conversation.

Your backstory:
You worked ten years in accounts receivable.

Instructions:
Help customers with billing questions.
Ask for the invoice number first.

Base instructions:
Answer in the language of the user.

Rules you must always follow:
Never share another customer's data.
Never promise refunds.

Tone of voice:
Friendly and concise.

Personality:
Steady (DISC S): calm, patient and supportive; be reassuring, consistent and a good listener.

Greeting:
At the start of a conversation, greet the user like this:
Hi, I am Ada from billing. How can I help?

Examples of what users may ask you:
- Why was I charged twice?
- How do I update my card?

What you know about the user:
- Works at Globex.
- Prefers email over phone.

Current date and time: 2026-11-21 14:03 UTC (Saturday)`)
  })

  it('is only the identity line when nothing else is set', () => {
    expect(composeSystemPrompt(agent())).toBe('You are Ada.')
    expect(composeSystemPrompt({ name: '  ', instruction: '', metadata: {} })).toBe('You are an AI assistant.')
  })

  it.each([
    ['role', 'Tutor', 'You are Ada.\nYour role: Tutor'],
    ['goal_statement', 'Teach algebra.', 'You are Ada.\n\nYour goal:\nTeach algebra.'],
    ['backstory', 'A former teacher.', 'You are Ada.\n\nYour backstory:\nA former teacher.'],
    ['base_instructions', 'Use LaTeX.', 'You are Ada.\n\nBase instructions:\nUse LaTeX.'],
    ['guardrails', 'No homework answers.', 'You are Ada.\n\nRules you must always follow:\nNo homework answers.'],
    ['tone_of_voice', 'Playful.', 'You are Ada.\n\nTone of voice:\nPlayful.'],
    ['greetings', 'Hello!', 'You are Ada.\n\nGreeting:\nAt the start of a conversation, greet the user like this:\nHello!'],
    ['conversation_starters', ['What is x?'], 'You are Ada.\n\nExamples of what users may ask you:\n- What is x?'],
  ])('puts %s in its own section', (key, value, expected) => {
    expect(composeSystemPrompt(agent({ [key]: value }))).toBe(expected)
  })

  it('puts the instruction under Instructions', () => {
    expect(composeSystemPrompt(agent({}, 'Be helpful.'))).toBe('You are Ada.\n\nInstructions:\nBe helpful.')
  })

  it.each(Object.keys(DISC_DESCRIPTIONS))('describes the %s DISC personality in one line', (style) => {
    const prompt = composeSystemPrompt(agent({ disc_personality: style }))
    expect(prompt).toBe(`You are Ada.\n\nPersonality:\n${DISC_DESCRIPTIONS[style]}`)
    expect(DISC_DESCRIPTIONS[style]).not.toContain('\n')
  })

  it('has four distinct DISC descriptions', () => {
    expect(Object.keys(DISC_DESCRIPTIONS)).toEqual(['dominant', 'influential', 'steady', 'conscientious'])
    expect(new Set(Object.values(DISC_DESCRIPTIONS)).size).toBe(4)
  })

  it('leaves out a DISC personality that is not one of the four', () => {
    for (const value of ['bossy', 'constructor', 'toString', 7]) {
      expect(composeSystemPrompt(agent({ disc_personality: value }))).toBe('You are Ada.')
    }
  })

  it('leaves no empty heading for blank, empty or mistyped fields', () => {
    const prompt = composeSystemPrompt(
      agent(
        {
          role: '   ',
          goal_statement: '',
          backstory: '\n\n',
          base_instructions: null,
          guardrails: ['not', 'a string'],
          tone_of_voice: 42,
          greetings: ' \t ',
          conversation_starters: ['', '  '],
        },
        '  \n ',
      ),
      { memories: [' ', ''] },
    )
    expect(prompt).toBe('You are Ada.')
  })

  it('leaves out unknown metadata keys and settings', () => {
    const prompt = composeSystemPrompt(FULL)
    for (const hidden of ['teal', 'favourite_colour', 'alloy', 'gpt-4o-mini', 'web_search', 'true', 'false']) {
      expect(prompt).not.toContain(hidden)
    }
  })

  it('lists memories last, before the date, one line each', () => {
    const prompt = composeSystemPrompt(agent({ conversation_starters: ['Hi?'] }, 'Help.'), {
      memories: ['Lives in\nOslo.', '  Has two cats.  '],
      now: new Date('2026-01-04T00:00:00Z'),
    })
    expect(
      prompt.endsWith(
        'What you know about the user:\n- Lives in Oslo.\n- Has two cats.\n\nCurrent date and time: 2026-01-04 00:00 UTC (Sunday)',
      ),
    ).toBe(true)
    expect(prompt.indexOf('Examples of what users may ask you:')).toBeLessThan(prompt.indexOf('What you know about the user:'))
  })

  it('keeps the documented section order whatever the key order', () => {
    const reversed = Object.fromEntries(Object.entries(FULL.metadata).reverse())
    expect(composeSystemPrompt({ ...FULL, metadata: reversed })).toBe(composeSystemPrompt(FULL))
    const headings = composeSystemPrompt(FULL, { memories: ['x'] })
      .split('\n\n')
      .map((part) => part.split('\n')[0])
    expect(headings).toEqual([
      'You are Ada.',
      'Your goal:',
      'Your backstory:',
      'Instructions:',
      'Base instructions:',
      'Rules you must always follow:',
      'Tone of voice:',
      'Personality:',
      'Greeting:',
      'Examples of what users may ask you:',
      'What you know about the user:',
    ])
  })

  it('normalizes line endings and leaves no trailing whitespace', () => {
    const prompt = composeSystemPrompt(
      agent({ backstory: '\r\n  First line.   \r\nSecond line.\t\r\n\r\n' }, 'Step one.  \n\n  Step two.  '),
      { memories: ['fact   '] },
    )
    expect(prompt).toBe(
      'You are Ada.\n\nYour backstory:\n  First line.\nSecond line.\n\nInstructions:\nStep one.\n\n  Step two.\n\nWhat you know about the user:\n- fact',
    )
    for (const row of prompt.split('\n')) expect(row).toBe(row.trimEnd())
    expect(prompt).not.toContain('\r')
  })

  it('is deterministic and reads no clock without now', () => {
    expect(composeSystemPrompt(FULL, { memories: ['a'] })).toBe(composeSystemPrompt(FULL, { memories: ['a'] }))
    expect(composeSystemPrompt(FULL)).not.toContain('Current date')
    expect(composeSystemPrompt(agent(), { now: new Date(Number.NaN) })).toBe('You are Ada.')
  })

  it('folds a multi-line name or role onto the identity line', () => {
    expect(composeSystemPrompt({ name: 'Ada\nLovelace', instruction: '', metadata: { role: 'Math\n tutor' } })).toBe(
      'You are Ada Lovelace.\nYour role: Math tutor',
    )
  })
})
