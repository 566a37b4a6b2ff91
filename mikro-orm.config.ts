/**
 * MikroORM configuration for the CLI and tooling: the same options the service uses
 * (src/db.ts), chosen from the environment exactly as `npm start` chooses them.
 */
import { loadConfig, loadDotEnv } from './src/config.ts'
import { ormOptions, targetFromConfig } from './src/db.ts'

loadDotEnv()
export default ormOptions(targetFromConfig(loadConfig()))
