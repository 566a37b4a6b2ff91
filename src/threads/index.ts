/**
 * The threads capability's public surface: the only module routers, the HTTP host, the runtime and
 * other capabilities import from src/threads/ (docs/architecture.md, "Rules").
 */
export * as memories from './memories.service.ts'
export { Memory, MemoryEnvelope, MemoryListInput, MemoryPathInput, UpdateMemoryInput } from './memory.schema.ts'
export { CreateMessageInput, Message, messageColumns, MessageEnvelope, MessageListInput, MessagePathInput, type MessageRow, toMessage, UpdateMessageInput } from './message.schema.ts'
export * as messages from './messages.service.ts'
export { appendMessage, threadHistory } from './messages.service.ts'
export * as threadNames from './thread-names.service.ts'
export { CreateThreadInput, Thread, ThreadEnvelope, ThreadListInput, ThreadPathInput, UpdateThreadInput } from './thread.schema.ts'
export * as threads from './threads.service.ts'
export { activeRunSql, requireThread } from './threads.service.ts'
