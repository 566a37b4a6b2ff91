/**
 * Writes one log line through the service's logger and exits: test/logging.test.ts runs it on a
 * pseudo-terminal and on a pipe, to see both outputs as a person and a collector would.
 */
import { createLogger } from '../../src/platform/logger.ts'

createLogger({ logLevel: 'info' }).info({ password: 'hunter2-hunter2' }, 'hello from the logger')
