/** Workspace slugs: readable, unique, derived from a name. */
import { randomBytes } from 'node:crypto'
import type { Em } from './db.ts'

/** Lower-case ASCII words joined by hyphens, at most 60 characters; `workspace` when nothing is left. */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 60)
    .replace(/-+$/, '')
  return slug || 'workspace'
}

/** The slug of a name, with a random suffix when the plain one is taken. */
export async function uniqueSlug(em: Em, name: string): Promise<string> {
  const base = slugify(name)
  const candidates = [base, ...Array.from({ length: 4 }, () => `${base}-${randomBytes(3).toString('hex')}`)]
  const rows = await em.execute('select slug from workspaces where slug in (?, ?, ?, ?, ?)', candidates)
  const taken = new Set(rows.map((row) => String(row.slug)))
  return candidates.find((slug) => !taken.has(slug)) ?? `${base}-${randomBytes(8).toString('hex')}`
}
