/** `npm run openapi`: prints the OpenAPI 3.1 document generated from the routers. */
import { openApiDocument } from '../http/openapi-document.ts'

process.stdout.write(`${JSON.stringify(openApiDocument(process.env.APP_URL ?? 'http://127.0.0.1:3000'), null, 2)}\n`)
