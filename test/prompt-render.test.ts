/**
 * Unit tests of prompt rendering (src/prompts/prompt-render.ts): every input check, then Mustache.
 */
import { describe, expect, it } from 'vitest'
import { ValidationError } from '../src/platform/errors.ts'
import { checkPromptTemplate, PROMPT_TEXT_INPUT_MAX, renderPrompt, type PromptInputDecl } from '../src/prompts/prompt-render.ts'

const input = (key: string, type: string, extra: Partial<PromptInputDecl> = {}): PromptInputDecl => ({
  key,
  label: key[0].toUpperCase() + key.slice(1),
  type,
  required: false,
  ...extra,
})

const INPUTS: PromptInputDecl[] = [
  input('topic', 'text', { required: true }),
  input('notes', 'textarea'),
  input('words', 'number'),
  input('formal', 'boolean'),
  input('due', 'date'),
  input('tone', 'select', { options: ['formal', 'casual'] }),
  input('audience', 'multiselect', { options: ['users', 'admins', 'developers'] }),
]

/** The ValidationError `fn` throws. */
function failure(fn: () => unknown): ValidationError {
  try {
    fn()
  } catch (error) {
    if (error instanceof ValidationError) return error
    throw error
  }
  throw new Error('expected a ValidationError')
}

/** Path and message of the error rendering `values` against INPUTS throws. */
function issue(values: unknown, inputs: PromptInputDecl[] = INPUTS) {
  const error = failure(() => renderPrompt('{{topic}}', inputs, values))
  expect(error.status).toBe(400)
  return { path: error.issues[0].path, message: error.issues[0].message }
}

describe('renderPrompt: values', () => {
  it.each([null, 'topic', 42, ['topic'], true])('refuses %j as values, naming input', (values) => {
    expect(issue(values)).toEqual({ path: ['input'], message: 'input must be an object of input values by key' })
  })

  it('refuses an undeclared key, naming it', () => {
    expect(issue({ topic: 'x', topc: 'typo' })).toEqual({ path: ['input', 'topc'], message: 'topc is not an input of this prompt' })
  })

  it('refuses Object.prototype names that are not declared', () => {
    expect(issue(JSON.parse('{"topic":"x","__proto__":"y"}')).path).toEqual(['input', '__proto__'])
    expect(issue({ topic: 'x', constructor: 'y' }).path).toEqual(['input', 'constructor'])
  })

  it('reports the undeclared key before a missing required input', () => {
    expect(issue({ extra: 1 }).path).toEqual(['input', 'extra'])
  })
})

describe('renderPrompt: required inputs', () => {
  it.each([
    ['missing', {}],
    ['null', { topic: null }],
    ['an empty string', { topic: '' }],
    ['a blank string', { topic: '  \n' }],
  ])('refuses a required input that is %s', (_, values) => {
    expect(issue(values)).toEqual({ path: ['input', 'topic'], message: 'Topic is required' })
  })

  it('refuses an empty list for a required multiselect', () => {
    const inputs = [input('audience', 'multiselect', { required: true, options: ['a'] })]
    expect(issue({ audience: [] }, inputs)).toEqual({ path: ['input', 'audience'], message: 'Audience is required' })
  })

  it('takes false and 0 as values of required inputs', () => {
    const inputs = [input('formal', 'boolean', { required: true }), input('words', 'number', { required: true })]
    expect(renderPrompt('{{formal}} {{words}}', inputs, { formal: false, words: 0 })).toBe('false 0')
  })

  it('lets optional inputs be left out, null or blank', () => {
    expect(
      renderPrompt('[{{topic}}|{{notes}}|{{words}}|{{tone}}|{{audience}}]', INPUTS, { topic: 't', notes: null, tone: '', audience: [] }),
    ).toBe('[t||||]')
  })
})

describe('renderPrompt: types', () => {
  it.each([
    ['text', 7, 'Topic must be a string'],
    ['text', ['a'], 'Topic must be a string'],
    ['textarea', { a: 1 }, 'Notes must be a string'],
  ])('refuses a %s input given %j', (type, value, message) => {
    const key = type === 'text' ? 'topic' : 'notes'
    expect(issue({ topic: 'x', [key]: value })).toEqual({ path: ['input', key], message })
  })

  it('takes text up to 100,000 characters and refuses one more', () => {
    const longest = 'a'.repeat(PROMPT_TEXT_INPUT_MAX)
    expect(renderPrompt('{{notes}}', INPUTS, { topic: 'x', notes: longest })).toHaveLength(PROMPT_TEXT_INPUT_MAX)
    expect(issue({ topic: 'x', notes: `${longest}a` })).toEqual({
      path: ['input', 'notes'],
      message: 'Notes must be at most 100,000 characters',
    })
  })

  it.each(['5', Number.NaN, Number.POSITIVE_INFINITY, true])('refuses %j for a number input', (value) => {
    expect(issue({ topic: 'x', words: value })).toEqual({ path: ['input', 'words'], message: 'Words must be a finite number' })
  })

  it('renders numbers as JavaScript writes them', () => {
    expect(renderPrompt('{{words}}', INPUTS, { topic: 'x', words: -12.5 })).toBe('-12.5')
  })

  it.each(['true', 1, 0])('refuses %j for a boolean input', (value) => {
    expect(issue({ topic: 'x', formal: value })).toEqual({ path: ['input', 'formal'], message: 'Formal must be true or false' })
  })

  it('renders booleans as true/false and drives sections', () => {
    const content = '{{formal}}: {{#formal}}Dear Sir{{/formal}}{{^formal}}Hey{{/formal}}'
    expect(renderPrompt(content, INPUTS, { topic: 'x', formal: true })).toBe('true: Dear Sir')
    expect(renderPrompt(content, INPUTS, { topic: 'x', formal: false })).toBe('false: Hey')
  })

  it.each([
    '2025-02-29',
    '2024-13-01',
    '2024-00-10',
    '2024-04-31',
    '2024-01-00',
    '2024-1-5',
    '2024-01-05T00:00:00Z',
    '05/01/2024',
    20240105,
  ])('refuses %j for a date input', (value) => {
    expect(issue({ topic: 'x', due: value })).toEqual({ path: ['input', 'due'], message: 'Due must be a calendar date written YYYY-MM-DD' })
  })

  it.each(['2024-02-29', '2000-02-29', '2025-12-31', '0001-01-01'])('takes the calendar date %s', (value) => {
    expect(renderPrompt('{{due}}', INPUTS, { topic: 'x', due: value })).toBe(value)
  })

  it('refuses 1900-02-29 (1900 is not a leap year)', () => {
    expect(issue({ topic: 'x', due: '1900-02-29' }).path).toEqual(['input', 'due'])
  })

  it.each(['FORMAL', 'rude', 1, ['formal']])('refuses %j for a select input', (value) => {
    expect(issue({ topic: 'x', tone: value })).toEqual({ path: ['input', 'tone'], message: 'Tone must be one of "formal", "casual"' })
  })

  it('shortens a long option list in the message', () => {
    const options = Array.from({ length: 12 }, (_, i) => `o${i}`)
    const { message } = issue({ topic: 'x', pick: 'zz' }, [input('topic', 'text'), input('pick', 'select', { options })])
    expect(message).toBe('Pick must be one of "o0", "o1", "o2", "o3", "o4", "o5", "o6", "o7", "o8", "o9", …')
  })

  it.each([
    ['users', 'Audience must be a list of options'],
    [['users', 'guests'], 'Audience items must be one of "users", "admins", "developers"'],
    [['users', 3], 'Audience items must be one of "users", "admins", "developers"'],
    [['users', 'admins', 'users'], 'Audience must not repeat "users"'],
  ])('refuses %j for a multiselect input', (value, message) => {
    expect(issue({ topic: 'x', audience: value })).toEqual({ path: ['input', 'audience'], message })
  })

  it('renders a multiselect as a comma-separated list that sections iterate', () => {
    const values = { topic: 'x', audience: ['admins', 'users'] }
    expect(renderPrompt('For {{audience}}.', INPUTS, values)).toBe('For admins, users.')
    expect(renderPrompt('{{#audience}}<{{.}}>{{/audience}}', INPUTS, values)).toBe('<admins><users>')
  })

  it('refuses a value for an input of an unknown type', () => {
    expect(issue({ x: 'y' }, [input('x', 'color')])).toEqual({ path: ['input', 'x'], message: 'X has an unsupported type "color"' })
  })
})

describe('renderPrompt: rendering', () => {
  it('fills {{key}} placeholders', () => {
    const content = 'Write a {{tone}} post about {{topic}} in {{words}} words by {{due}}.'
    expect(renderPrompt(content, INPUTS, { topic: 'tRPC', tone: 'casual', words: 300, due: '2026-01-31' })).toBe(
      'Write a casual post about tRPC in 300 words by 2026-01-31.',
    )
  })

  it('inserts values without HTML escaping, in every tag form', () => {
    const value = `a < b && "c" 'd' = e/f`
    expect(renderPrompt('{{topic}}|{{{topic}}}|{{&topic}}', INPUTS, { topic: value })).toBe(`${value}|${value}|${value}`)
  })

  it('never renders values as templates', () => {
    expect(renderPrompt('{{topic}} {{notes}}', INPUTS, { topic: '{{notes}}', notes: '{{#x}}' })).toBe('{{notes}} {{#x}}')
  })

  it('renders undeclared placeholders and Object.prototype names as nothing', () => {
    expect(renderPrompt('[{{missing}}][{{constructor}}][{{toString}}][{{.}}][{{__proto__}}]', INPUTS, { topic: 'x' })).toBe('[][][][][]')
  })

  it('renders an input named like an Object.prototype member', () => {
    const inputs = [input('constructor', 'text'), input('__proto__', 'text')]
    expect(renderPrompt('{{constructor}}/{{__proto__}}', inputs, JSON.parse('{"constructor":"a","__proto__":"b"}'))).toBe('a/b')
  })

  it('keeps the text around placeholders as it is', () => {
    expect(renderPrompt('  <b>{{topic}}</b> & more\n', INPUTS, { topic: 'x' })).toBe('  <b>x</b> & more\n')
  })

  it('answers a ValidationError on content for a broken template', () => {
    const error = failure(() => renderPrompt('Hi {{#topic}} never closed', INPUTS, { topic: 'x' }))
    expect(error.issues[0].path).toEqual(['content'])
    expect(error.message).toMatch(/^is not a valid Mustache template: Unclosed section "topic"/)
    expect(failure(() => checkPromptTemplate('{{topic')).issues[0].path).toEqual(['content'])
    expect(() => checkPromptTemplate('Fine {{topic}}')).not.toThrow()
  })

  it('checks the inputs before the template', () => {
    expect(failure(() => renderPrompt('{{#broken}}', INPUTS, {})).issues[0].path).toEqual(['input', 'topic'])
  })

  it('renders the same template again from its cache with other values', () => {
    const content = 'About {{topic}}.'
    expect(renderPrompt(content, INPUTS, { topic: 'one' })).toBe('About one.')
    expect(renderPrompt(content, INPUTS, { topic: 'two' })).toBe('About two.')
  })
})
