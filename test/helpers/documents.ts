/**
 * Documents made by real writers, for the knowledge extraction and upload tests: PDFs by PDFKit
 * (encrypted ones too), DOCX files by the docx package. Nothing is committed as a binary fixture.
 */
import { AlignmentType, Document, HeadingLevel, Packer, Paragraph, Table, TableCell, TableRow, TextRun } from 'docx'
import PDFDocument from 'pdfkit'

/**
 * A PDF with one page per entry of `pages`, each line written as a line of text.
 * @param options.userPassword encrypts the file: it cannot be opened without the password.
 * @param options.ownerPassword restricts permissions only: anyone can open and read it.
 */
export function makePdf(pages: string[][], options: { userPassword?: string; ownerPassword?: string } = {}): Promise<Buffer> {
  const encrypted = options.userPassword || options.ownerPassword
  return new Promise((resolve, reject) => {
    const doc = new PDFDocument({
      autoFirstPage: false,
      // AES-256, as current writers encrypt.
      ...(encrypted ? { pdfVersion: '1.7ext3' as const, ...options, permissions: { printing: 'highResolution' as const } } : {}),
    })
    const parts: Buffer[] = []
    doc.on('data', (part: Buffer) => parts.push(part))
    doc.on('end', () => resolve(Buffer.concat(parts)))
    doc.on('error', reject)
    for (const lines of pages) {
      doc.addPage()
      for (const line of lines) doc.text(line)
    }
    doc.end()
  })
}

/** What a made DOCX holds: a heading, paragraphs (a `**bold**` run is written bold), list items and a table. */
export interface DocxContent {
  heading?: string
  paragraphs?: string[]
  bullets?: string[]
  table?: string[][]
}

/** A DOCX file as Word would read it, written by the docx package. */
export async function makeDocx(content: DocxContent): Promise<Buffer> {
  const children: Array<Paragraph | Table> = []
  if (content.heading) children.push(new Paragraph({ text: content.heading, heading: HeadingLevel.HEADING_1 }))
  for (const text of content.paragraphs ?? []) {
    const runs = text.split(/(\*\*[^*]+\*\*)/).map((part) => (part.startsWith('**') ? new TextRun({ text: part.slice(2, -2), bold: true }) : new TextRun(part)))
    children.push(new Paragraph({ children: runs, alignment: AlignmentType.LEFT }))
  }
  for (const text of content.bullets ?? []) children.push(new Paragraph({ text, bullet: { level: 0 } }))
  if (content.table) {
    const rows = content.table.map((cells) => new TableRow({ children: cells.map((cell) => new TableCell({ children: [new Paragraph(cell)] })) }))
    children.push(new Table({ rows }))
  }
  return Packer.toBuffer(new Document({ sections: [{ children }] }))
}
