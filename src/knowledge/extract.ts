/** Placeholder until the extraction module lands (replaced on merge). */
export class ExtractionError extends Error {
  override name = 'ExtractionError'
}
export const TRAINABLE_TYPES = ['text/plain', 'text/markdown', 'text/html', 'application/pdf', 'application/vnd.openxmlformats-officedocument.wordprocessingml.document', 'text/csv', 'application/json'] as const
export function isTrainable(mimeType: string): boolean {
  return (TRAINABLE_TYPES as readonly string[]).includes(mimeType)
}
export async function extractText(bytes: Uint8Array, mimeType: string): Promise<string> {
  void mimeType
  const text = Buffer.from(bytes).toString('utf8').trim()
  if (!text) throw new ExtractionError('The file contains no text')
  return text
}
