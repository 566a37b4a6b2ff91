/**
 * The command-room capability's public surface: the only module routers, the HTTP host, the runtime and
 * other capabilities import from src/command-room/ (docs/architecture.md, "Rules").
 */
export { createCommandRoomActor } from './command-room-firing.ts'
export { CommandRoomFiring, CommandRoomFiringEnvelope, CommandRoomFiringListInput, CommandRoomTask, CommandRoomTaskEnvelope, CommandRoomTaskListInput, CommandRoomTaskPathInput, StoreCommandRoomTaskInput, UpdateCommandRoomTaskInput } from './command-room.schema.ts'
export * as commandRoom from './command-room.service.ts'
export { CommandRoomEngine } from './engine.ts'
