/**
 * MikroORM configuration for the CLI and tooling: the same options the service uses
 * (src/platform/db.ts), chosen from the environment exactly as `npm start` chooses them.
 */
import { loadConfig, loadDotEnv } from './src/platform/config.ts'
import { ormOptions, targetFromConfig } from './src/platform/db.ts'

loadDotEnv()
export default ormOptions(targetFromConfig(loadConfig()))
