/**
 * What the command room capability adds to the service context's dependencies (src/context.ts,
 * `ServiceDeps`), by declaration merging.
 */
import type { CommandRoomEngine } from './engine.ts'

/** What services call on the command room engine (./engine.ts): send a firing's job, wake the scheduler for a new due time. */
export type CommandRoomPort = Pick<CommandRoomEngine, 'send' | 'wake'>

declare module '../context.ts' {
  interface ServiceDeps {
    commandRoom: CommandRoomPort
  }
}
