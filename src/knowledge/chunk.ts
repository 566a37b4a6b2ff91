/** Placeholder until the chunking module lands (replaced on merge). */
export const CHUNK_TOKENS = 400
export const OVERLAP_TOKENS = 60
export function countTokens(text: string): number {
  return Math.ceil(text.length / 4)
}
export async function chunkText(text: string, options: { chunkTokens?: number; overlapTokens?: number } = {}): Promise<Array<{ index: number; text: string; tokens: number }>> {
  const size = (options.chunkTokens ?? CHUNK_TOKENS) * 4
  const out: Array<{ index: number; text: string; tokens: number }> = []
  for (let i = 0; i < text.length; i += size) out.push({ index: out.length, text: text.slice(i, i + size), tokens: countTokens(text.slice(i, i + size)) })
  return out
}
