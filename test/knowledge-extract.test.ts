/**
 * Text extraction and chunking for agent knowledge (src/knowledge/extract.ts,
 * src/knowledge/chunk.ts; docs/api/knowledge.md, "Extraction and chunking"). Every document is
 * made here by a real writer (test/helpers/documents.ts) or written as a string; the extracted
 * text must hold the facts put in, and every failure must be an ExtractionError a user can act on.
 */
import { countTokens as cl100k } from 'gpt-tokenizer/encoding/cl100k_base'
import { describe, expect, it } from 'vitest'
import { CHUNK_TOKENS, chunkText, countTokens, OVERLAP_TOKENS, type Chunk } from '../src/knowledge/chunk.ts'
import { ExtractionError, extractHtml, extractText, isTrainable, TRAINABLE_TYPES } from '../src/knowledge/extract.ts'
import { makeDocx, makePdf } from './helpers/documents.ts'

const DOCX = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document'
const utf8 = (text: string) => new TextEncoder().encode(text)

/** The ExtractionError `promise` rejects with; fails unless it is one, with a message fit for a user. */
async function extractionError(promise: Promise<unknown>): Promise<ExtractionError> {
  const error = await promise.then(
    () => null,
    (thrown: unknown) => thrown,
  )
  expect(error).toBeInstanceOf(ExtractionError)
  const { message } = error as ExtractionError
  // One sentence for a person: no stack, no parser's class names, no file paths.
  expect(message).not.toMatch(/\n|\bat .+:\d+|Exception|node_modules|\.js\b|undefined/)
  return error as ExtractionError
}

describe('extractText', () => {
  describe('PDF', () => {
    it('reads the text of every page, pages apart by a blank line', async () => {
      const pdf = await makePdf([
        ['Returns policy', 'Refunds are accepted within 30 days of delivery.'],
        ['Support hours', 'The help desk answers from 09:00 to 17:00 CET.'],
      ])
      const text = await extractText(pdf, 'application/pdf')
      expect(text).toContain('Refunds are accepted within 30 days of delivery.')
      expect(text).toContain('The help desk answers from 09:00 to 17:00 CET.')
      expect(text.indexOf('Returns policy')).toBeLessThan(text.indexOf('Support hours'))
      expect(text).toMatch(/delivery\.\n\nSupport hours/)
      expect(text).toBe(text.trim())
    })

    it('does not detach or change the caller\'s bytes', async () => {
      const pdf = await makePdf([['Kept intact']])
      const copy = Buffer.from(pdf)
      await extractText(pdf, 'application/pdf')
      expect(pdf.equals(copy)).toBe(true)
    })

    it('reads a PDF that only restricts permissions (it opens without a password)', async () => {
      const pdf = await makePdf([['Owner-restricted handbook: lockers close at 22:00.']], { ownerPassword: 'owner-secret' })
      expect(await extractText(pdf, 'application/pdf')).toContain('lockers close at 22:00')
    })

    it('refuses a PDF encrypted with a password, asking for an unencrypted copy', async () => {
      const pdf = await makePdf([['Secret plans']], { userPassword: 'open-sesame', ownerPassword: 'owner-secret' })
      const error = await extractionError(extractText(pdf, 'application/pdf'))
      expect(error.message).toBe('The PDF is encrypted with a password; upload an unencrypted copy')
      expect(error.cause).toBeInstanceOf(Error)
    })

    it.each([
      ['not a PDF at all', utf8('hello, I am plain text')],
      ['a PDF header followed by garbage', utf8('%PDF-1.7\n%\u00e2\u00e3\n1 0 obj garbage garbage\n')],
    ])('refuses %s as corrupt', async (_label, bytes) => {
      const error = await extractionError(extractText(bytes, 'application/pdf'))
      expect(error.message).toMatch(/^The PDF is (corrupt or not a PDF|damaged)/)
      expect(error.message).toMatch(/upload the new copy$/)
    })

    it('refuses a truncated PDF as corrupt', async () => {
      const pdf = await makePdf([['Cut short']])
      const error = await extractionError(extractText(pdf.subarray(0, Math.floor(pdf.length / 2)), 'application/pdf'))
      expect(error.message).toMatch(/^The PDF is (corrupt or not a PDF|damaged)/)
    })

    it('refuses a PDF without a text layer, saying so', async () => {
      const pdf = await makePdf([[]])
      const error = await extractionError(extractText(pdf, 'application/pdf'))
      expect(error.message).toBe('The PDF has no text layer (a scanned PDF?); upload a PDF whose text can be selected')
    })
  })

  describe('DOCX', () => {
    it('reads headings, paragraphs with formatted runs, list items and table cells, in order', async () => {
      const docx = await makeDocx({
        heading: 'Employee handbook',
        paragraphs: ['Holidays: every employee gets **25 days** a year.', 'Remote work is allowed on Fridays.'],
        bullets: ['Laptops are renewed every 3 years', 'Phones every 2 years'],
        table: [
          ['Office', 'Opens'],
          ['Lisbon', '08:30'],
        ],
      })
      const text = await extractText(docx, DOCX)
      for (const fact of ['Employee handbook', 'Holidays: every employee gets 25 days a year.', 'Remote work is allowed on Fridays.', 'Laptops are renewed every 3 years', 'Lisbon', '08:30']) {
        expect(text).toContain(fact)
      }
      expect(text.indexOf('Employee handbook')).toBeLessThan(text.indexOf('Holidays'))
      expect(text.indexOf('Holidays')).toBeLessThan(text.indexOf('Lisbon'))
      expect(text).toMatch(/a year\.\n\nRemote work/)
      expect(text).not.toMatch(/\n{3}/)
    })

    it.each([
      ['bytes that are not a ZIP archive', utf8('definitely not a word document')],
      ['a ZIP archive that is not a DOCX', Buffer.from('504b0506000000000000000000000000000000000000', 'hex')],
    ])('refuses %s as corrupt', async (_label, bytes) => {
      const error = await extractionError(extractText(bytes, DOCX))
      expect(error.message).toBe('The DOCX file is corrupt or not a DOCX file; save it again from your editor and upload the copy')
    })

    it('refuses a truncated DOCX as corrupt', async () => {
      const docx = await makeDocx({ paragraphs: ['Cut short'] })
      const error = await extractionError(extractText(docx.subarray(0, 3000), DOCX))
      expect(error.message).toMatch(/^The DOCX file is corrupt/)
    })

    it('refuses a password-protected (or old .doc) Word file, saying what to do', async () => {
      // Word encrypts a DOCX into an OLE compound file, the container of old .doc files too.
      const ole = Buffer.concat([Buffer.from('d0cf11e0a1b11ae1', 'hex'), Buffer.alloc(504)])
      const error = await extractionError(extractText(ole, DOCX))
      expect(error.message).toBe('The Word file is password-protected or in the old .doc format; save it as an unprotected .docx and upload it again')
    })

    it('refuses a DOCX without text', async () => {
      const docx = await makeDocx({ paragraphs: ['', '   '] })
      expect((await extractionError(extractText(docx, DOCX))).message).toBe('The file contains no text')
    })
  })

  describe('HTML', () => {
    const page = `<!doctype html>
      <html><head><title>Shop</title><style>.price { color: red }</style>
      <script>window.secret = "SCRIPT_SECRET"</script></head>
      <body>
        <nav><a href="/">Home</a> <a href="/about">NAV_ABOUT</a></nav>
        <h1>Returns &amp; refunds</h1>
        <p>Refunds within <b>30 days</b>. Read <a href="https://example.com/policy">the full policy</a> first.</p>
        <h2>Shipping</h2>
        <ul><li>Europe: 3 days</li><li>World: 10 days</li></ul>
        <table><tr><th>Plan</th><th>Price</th></tr><tr><td>Basic</td><td>€10</td></tr></table>
        <img src="banner.png" alt="IMG_ALT"><noscript>NOSCRIPT_TEXT</noscript>
        <div hidden>HIDDEN_TEXT</div><svg><text>SVG_TEXT</text></svg>
      </body></html>`

    it('keeps headings, paragraphs, the text of links, lists and tables; drops scripts, styles, navigation and hidden parts', async () => {
      const text = await extractText(utf8(page), 'text/html')
      expect(text).toMatch(/^Returns & refunds\n\nRefunds within 30 days\. Read the full policy first\.\n\nShipping\n/)
      expect(text).toContain('Europe: 3 days')
      expect(text).toContain('World: 10 days')
      expect(text).toMatch(/Plan +Price\nBasic +€10/)
      for (const gone of ['SCRIPT_SECRET', 'color: red', 'NAV_ABOUT', 'IMG_ALT', 'NOSCRIPT_TEXT', 'HIDDEN_TEXT', 'SVG_TEXT', 'https://example.com', 'RETURNS']) {
        expect(text).not.toContain(gone)
      }
      expect(text).not.toMatch(/\n{3}/)
      expect(await extractHtml(page)).toBe(text)
    })

    it('decodes the charset named in the type (a fetched page\'s Content-Type)', async () => {
      const latin1 = Buffer.from('<p>Caf\u00e9 cr\u00e8me: 2 \u20ac</p>'.replace('\u20ac', 'EUR'), 'latin1')
      expect(await extractText(latin1, 'text/html; charset=ISO-8859-1')).toBe('Café crème: 2 EUR')
      expect(await extractText(utf8('<p>Café</p>'), 'text/html')).toBe('Café')
    })

    it('refuses a page without text', async () => {
      const error = await extractionError(extractText(utf8('<html><head><script>x()</script></head><body><img src=a.png></body></html>'), 'text/html'))
      expect(error.message).toBe('The page contains no text')
    })
  })

  describe('CSV', () => {
    it('writes one line per row, each value named by its header column', async () => {
      const csv = 'name,role,office\r\nAda Lovelace,engineer,London\r\n"Hopper, Grace",admiral,"New\nYork"\r\n\r\nAlan,,Bletchley,extra\r\n'
      expect(await extractText(utf8(csv), 'text/csv')).toBe(
        [
          'name: Ada Lovelace; role: engineer; office: London',
          'name: Hopper, Grace; role: admiral; office: New York',
          'name: Alan; office: Bletchley; column 4: extra',
        ].join('\n'),
      )
    })

    it('reads semicolon- and tab-separated files, and a BOM', async () => {
      expect(await extractText(utf8('\ufeffproduct;price\nTea;3,50\n'), 'text/csv')).toBe('product: Tea; price: 3,50')
      expect(await extractText(utf8('city\tcountry\nPorto\tPortugal\n'), 'text/csv')).toBe('city: Porto; country: Portugal')
    })

    it('gives a file of only a header its header', async () => {
      expect(await extractText(utf8('id,name,email\n'), 'text/csv')).toBe('id; name; email')
    })

    it('refuses malformed quoting, naming the line', async () => {
      const error = await extractionError(extractText(utf8('a,b\n1,2\n"unterminated,3\n'), 'text/csv'))
      expect(error.message).toMatch(/^The CSV file is malformed near line \d+; check its quotes and delimiters$/)
    })

    it('refuses a CSV of empty cells', async () => {
      expect((await extractionError(extractText(utf8(',,\n,,\n'), 'text/csv'))).message).toBe('The file contains no text')
    })
  })

  describe('JSON', () => {
    it('writes one "path: value" line per leaf, in document order', async () => {
      const json = JSON.stringify({
        company: { name: 'Acme', founded: 1999, public: false },
        plans: [
          { name: 'Basic', price: 10 },
          { name: 'Pro', price: null },
        ],
        'opening hours': 'Mon-Fri 9-17',
        tags: [],
        notes: {},
      })
      expect(await extractText(utf8(json), 'application/json')).toBe(
        [
          'company.name: Acme',
          'company.founded: 1999',
          'company.public: false',
          'plans[0].name: Basic',
          'plans[0].price: 10',
          'plans[1].name: Pro',
          'plans[1].price: null',
          '["opening hours"]: Mon-Fri 9-17',
        ].join('\n'),
      )
    })

    it('writes a top-level array and a top-level value', async () => {
      expect(await extractText(utf8('[{"q": "Opening hours?", "a": "9 to 5"}]'), 'application/json')).toBe('[0].q: Opening hours?\n[0].a: 9 to 5')
      expect(await extractText(utf8('"just a sentence"'), 'application/json')).toBe('just a sentence')
    })

    it('reads deeply nested JSON without overflowing the stack', async () => {
      const depth = 20_000
      const json = '{"a":'.repeat(depth) + '"bottom"' + '}'.repeat(depth)
      const text = await extractText(utf8(json), 'application/json')
      expect(text.endsWith('.a: bottom')).toBe(true)
    })

    it('refuses invalid JSON and JSON without values', async () => {
      expect((await extractionError(extractText(utf8('{"a": 1,}'), 'application/json'))).message).toBe(
        'The JSON file is not valid JSON; fix it, or upload it as a .txt file',
      )
      expect((await extractionError(extractText(utf8('{"a": {}, "b": []}'), 'application/json'))).message).toBe('The file contains no text')
    })
  })

  describe('Markdown and plain text', () => {
    it('keeps the text as it is, with \\n line ends, without NUL or a BOM', async () => {
      const markdown = '\ufeff# Title\r\n\r\n- item **one**\r\n- item two\rend\u0000.\n'
      expect(await extractText(utf8(markdown), 'text/markdown')).toBe('# Title\n\n- item **one**\n- item two\nend.')
      expect(await extractText(utf8('  plain\ttext  \n'), 'text/plain')).toBe('plain\ttext')
    })

    it('replaces bytes that are not UTF-8 rather than failing', async () => {
      expect(await extractText(Buffer.from([0x68, 0x69, 0xff, 0x21]), 'text/plain')).toBe('hi\ufffd!')
    })
  })

  it.each([
    ['an empty file', new Uint8Array(0), 'text/plain', 'The file is empty'],
    ['whitespace only', utf8(' \n\t\r\n '), 'text/plain', 'The file contains no text'],
    ['NUL only', new Uint8Array(16), 'text/markdown', 'The file contains no text'],
    ['an empty PDF', new Uint8Array(0), 'application/pdf', 'The file is empty'],
  ])('refuses %s', async (_label, bytes, type, message) => {
    expect((await extractionError(extractText(bytes, type))).message).toBe(message)
  })

  it('refuses a type that cannot be trained, naming those that can', async () => {
    const error = await extractionError(extractText(utf8('GIF89a'), 'image/gif'))
    expect(error.message).toBe('Files of type image/gif cannot be trained; use plain text, Markdown, HTML, PDF, DOCX, CSV and JSON')
  })
})

describe('isTrainable', () => {
  it('accepts the trainable types, with parameters and in any case; refuses others', () => {
    expect(TRAINABLE_TYPES).toEqual(['text/plain', 'text/markdown', 'text/html', 'application/pdf', DOCX, 'text/csv', 'application/json'])
    for (const type of TRAINABLE_TYPES) expect(isTrainable(type)).toBe(true)
    expect(isTrainable('Text/HTML; charset=utf-8')).toBe(true)
    for (const type of ['image/png', 'application/zip', 'application/msword', 'text/xml', '', 'text']) expect(isTrainable(type)).toBe(false)
  })
})

/** Paragraphs of made-up prose, some short, some long, with headings, in order: "Fact N" marks each sentence. */
function prose(paragraphs: number): string {
  const words = 'the harbour office opens early and ships every parcel within two working days to any address in the region'.split(' ')
  let fact = 0
  const out: string[] = []
  for (let p = 0; p < paragraphs; p++) {
    const sentences = [1, 3, 8, 2, 14, 5][p % 6]
    const body = Array.from({ length: sentences }, (_, s) => `Fact ${fact++}: ${words.slice(0, 6 + ((p + s) % 12)).join(' ')}.`)
    out.push((p % 7 === 0 ? `## Section ${p}\n` : '') + body.join(' '))
  }
  return out.join('\n\n')
}

/** The text without whitespace: chunks keep every other character, and reduce the whitespace where an overlap meets a body. */
const ink = (text: string) => text.replace(/\s+/g, '')

/** The longest end of `a` that `b` starts with. */
function overlapOf(a: string, b: string): string {
  for (let length = Math.min(a.length, b.length); length > 0; length--) {
    if (a.endsWith(b.slice(0, length))) return b.slice(0, length)
  }
  return ''
}

/** Checks the chunk rules: order and indexes, sizes, overlaps within bounds, and the whole text covered. */
function expectChunksOf(text: string, chunks: Chunk[], chunkTokens: number, overlapTokens: number): void {
  expect(chunks.map((chunk) => chunk.index)).toEqual(chunks.map((_, i) => i))
  let rebuilt = ''
  for (const [i, chunk] of chunks.entries()) {
    expect(chunk.text.trim()).toBe(chunk.text)
    expect(chunk.text.length).toBeGreaterThan(0)
    expect(chunk.tokens).toBe(countTokens(chunk.text))
    expect(chunk.tokens).toBeLessThanOrEqual(chunkTokens)
    if (i === 0) {
      rebuilt = chunk.text
      continue
    }
    const shared = overlapOf(chunks[i - 1].text, chunk.text)
    if (overlapTokens > 0) {
      expect(shared.length, `chunks ${i - 1} and ${i} share nothing`).toBeGreaterThan(0)
      expect(countTokens(shared)).toBeLessThanOrEqual(overlapTokens)
    }
    rebuilt += chunk.text.slice(shared.length)
  }
  expect(ink(rebuilt)).toBe(ink(text))
}

describe('countTokens', () => {
  it('counts cl100k_base tokens, special tokens as plain text', () => {
    expect(countTokens('')).toBe(0)
    expect(countTokens('hello world')).toBe(2)
    const text = prose(20)
    expect(countTokens(text)).toBe(cl100k(text))
    expect(countTokens('a <|endoftext|> b')).toBeGreaterThan(3)
  })

  it('counts a run without spaces in linear time, a little over the exact count at most', () => {
    const run = 'ACGT'.repeat(50_000)
    const started = performance.now()
    const counted = countTokens(run)
    expect(performance.now() - started).toBeLessThan(5_000)
    const exact = cl100k(run.slice(0, 12_800)) * (run.length / 12_800)
    expect(counted).toBeGreaterThanOrEqual(exact * 0.95)
    expect(counted).toBeLessThanOrEqual(exact * 1.1)
  })
})

describe('chunkText', () => {
  it('has the documented defaults', () => {
    expect([CHUNK_TOKENS, OVERLAP_TOKENS]).toEqual([400, 60])
  })

  it('gives a short text one chunk, and whitespace none', async () => {
    expect(await chunkText('  A short note.\n')).toEqual([{ index: 0, text: 'A short note.', tokens: countTokens('A short note.') }])
    expect(await chunkText(' \n\n\t ')).toEqual([])
  })

  it('cuts prose into chunks of at most 400 tokens, in order, each overlapping the one before, covering it all', async () => {
    const text = prose(80)
    const chunks = await chunkText(text)
    expect(chunks.length).toBeGreaterThan(5)
    expectChunksOf(text, chunks, 400, 60)
    // Fact numbers only grow: the order is kept.
    const firsts = chunks.map((chunk) => Number(/Fact (\d+)/.exec(chunk.text)?.[1]))
    expect(firsts).toEqual([...firsts].sort((a, b) => a - b))
    // Chunks are filled, not cut needlessly small (a body ends early rather than split a paragraph).
    const full = chunks.slice(0, -1).map((chunk) => chunk.tokens)
    expect(full.reduce((sum, tokens) => sum + tokens, 0) / full.length).toBeGreaterThan(300)
  })

  it('prefers paragraph breaks: a chunk ends at the end of a sentence when paragraphs fit', async () => {
    const text = Array.from({ length: 40 }, (_, i) => `Paragraph ${i} says one short thing about shipping.`).join('\n\n')
    const chunks = await chunkText(text, { chunkTokens: 64, overlapTokens: 16 })
    expectChunksOf(text, chunks, 64, 16)
    for (const chunk of chunks) expect(chunk.text).toMatch(/^Paragraph \d+ says .*shipping\.$/s)
  })

  it('takes other sizes, and no overlap at all', async () => {
    const text = prose(30)
    expectChunksOf(text, await chunkText(text, { chunkTokens: 100, overlapTokens: 20 }), 100, 20)
    const plain = await chunkText(text, { chunkTokens: 120, overlapTokens: 0 })
    expectChunksOf(text, plain, 120, 0)
    expect(ink(plain.map((chunk) => chunk.text).join(''))).toBe(ink(text))
  })

  it('cuts inside words only when a word is too long, never between the halves of an emoji', async () => {
    const emoji = ['😀', '🚢', '📦', 'a', '👍🏽']
    // Drawn at random (seeded): in a periodic run the overlap could not be told from a repeat.
    let seed = 7
    const next = () => (seed = (seed * 16_807) % 2_147_483_647)
    const run = Array.from({ length: 3_000 }, () => emoji[next() % emoji.length]).join('')
    const word = Array.from({ length: 20_000 }, () => String.fromCharCode(97 + (next() % 26))).join('')
    const text = `Intro line.\n\n${run}\n\n${word} tail`
    const chunks = await chunkText(text)
    expectChunksOf(text, chunks, 400, 60)
    for (const chunk of chunks) expect(chunk.text.isWellFormed()).toBe(true)
  })

  it('copes with text in scripts without spaces, special tokens, and long whitespace', async () => {
    const sentence = '我们的退货政策允许在三十天内退款请保留收据客户服务中心的工作时间是早上九点到下午五点'
    const chinese = Array.from({ length: 2_400 }, (_, i) => sentence[(i * 7 + ((i * i) % 13)) % sentence.length] + (i % 23 === 22 ? '。' : '')).join('')
    const text = `${chinese}\n\nEnd of text marker <|endoftext|> inside.${' '.repeat(5_000)}Last words.`
    expectChunksOf(text, await chunkText(text), 400, 60)
  })

  it('refuses sizes out of range', async () => {
    await expect(chunkText('x', { chunkTokens: 10 })).rejects.toThrow(RangeError)
    await expect(chunkText('x', { chunkTokens: 100, overlapTokens: 51 })).rejects.toThrow(RangeError)
    await expect(chunkText('x', { chunkTokens: 100.5 })).rejects.toThrow(RangeError)
    await expect(chunkText('x', { overlapTokens: -1 })).rejects.toThrow(RangeError)
  })

  it('lets the event loop run while it cuts a large text', async () => {
    let ticks = 0
    const timer = setInterval(() => ticks++, 5)
    try {
      await chunkText(prose(2_000))
    } finally {
      clearInterval(timer)
    }
    expect(ticks).toBeGreaterThan(2)
  })

  it('cuts 5 MB of prose in linear time', async () => {
    const text = prose(11_500)
    expect(text.length).toBeGreaterThan(5_000_000)
    expect(text.length).toBeLessThan(5_500_000)
    const started = performance.now()
    const chunks = await chunkText(text)
    const elapsed = performance.now() - started
    expect(chunks.length).toBeGreaterThan(2_000)
    expect(chunks.every((chunk) => chunk.tokens <= 400)).toBe(true)
    // About 3 s on a 2-core machine; the bound only catches a quadratic slide.
    expect(elapsed).toBeLessThan(60_000)
  }, 120_000)
})
