/** Every committed migration, in order; listed explicitly so no folder scanning happens at start. */
import type { Constructor } from '@mikro-orm/core'
import type { Migration } from '@mikro-orm/migrations'
import { Migration20261121093927 } from './Migration20261121093927_foundation.ts'

export const migrationsList: { name: string; class: Constructor<Migration> }[] = [
  { name: 'Migration20261121093927', class: Migration20261121093927 },
]
