/**
 * rjsf's validator over `@cfworker/json-schema`, which interprets schemas instead of compiling
 * them. rjsf's own validator (@rjsf/validator-ajv8) builds each check with `new Function`, which
 * the console's Content-Security-Policy (`script-src 'self'`, no 'unsafe-eval') refuses: every
 * check would fail with an EvalError. The service checks every saved graph anyway, and its issues
 * are shown at the fields they name; this one gives the same kind of answer while typing.
 */
import { Validator, type OutputUnit, type Schema } from '@cfworker/json-schema'
import {
  createErrorHandler,
  toErrorSchema,
  unwrapErrorHandler,
  validationDataMerge,
  type CustomValidator,
  type ErrorTransformer,
  type FormContextType,
  type RJSFSchema,
  type RJSFValidationError,
  type UiSchema,
  type ValidationData,
  type ValidatorType,
} from '@rjsf/utils'

/** Keywords whose failure only says that something inside failed; the inner failure is reported. */
const AGGREGATES = new Set(['properties', 'patternProperties', 'items', 'prefixItems', 'additionalItems', 'anyOf', 'oneOf', 'allOf', '$ref', 'if', 'then', 'else', 'contains', 'dependentSchemas', 'unevaluatedProperties', 'unevaluatedItems'])

/** Compiled validators by schema object: a node's form checks the same schema on every key stroke. */
const validators = new WeakMap<object, Validator>()

function unitsOf(schema: RJSFSchema, value: unknown): OutputUnit[] {
  let validator = validators.get(schema)
  if (!validator) {
    validator = new Validator(schema as Schema, '2020-12', false)
    validators.set(schema, validator)
  }
  return validator.validate(value).errors
}

/**
 * The failures a person can act on: no aggregate keyword, and at a place where some alternative
 * failed on more than its type (a number given to a number-or-expression field is too big, not
 * "not a string"), only those.
 */
function leafErrors(units: OutputUnit[]): RJSFValidationError[] {
  const leaves = units.filter((unit) => !AGGREGATES.has(unit.keyword))
  const nonType = new Set(leaves.filter((unit) => unit.keyword !== 'type').map((unit) => unit.instanceLocation))
  return leaves
    .filter((unit) => unit.keyword !== 'type' || !nonType.has(unit.instanceLocation))
    .map((unit) => {
      const path = unit.instanceLocation.replace(/^#/, '').split('/').filter(Boolean).map(decodeURIComponent)
      // A missing property is reported at the object; rjsf shows it at the property's field.
      const missing = unit.keyword === 'required' ? /property "([^"]+)"/.exec(unit.error)?.[1] : undefined
      if (missing !== undefined) path.push(missing)
      const property = path.map((key) => (/^\d+$/.test(key) || /^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `['${key.replace(/'/g, "\\'")}']`)).join('')
      const message = missing !== undefined ? 'is required' : unit.error
      return { name: unit.keyword, property, message, stack: `${property} ${message}`.trim(), params: {} }
    })
}

/** rjsf's validator interface (`validateFormData`, `isValid`, `rawValidation`). */
export const schemaValidator: ValidatorType<unknown, RJSFSchema, FormContextType> = {
  validateFormData(
    formData: unknown,
    schema: RJSFSchema,
    customValidate?: CustomValidator<unknown, RJSFSchema, FormContextType>,
    transformErrors?: ErrorTransformer<unknown, RJSFSchema, FormContextType>,
    uiSchema?: UiSchema<unknown, RJSFSchema, FormContextType>,
  ): ValidationData<unknown> {
    let errors = leafErrors(unitsOf(schema, formData))
    if (transformErrors) errors = transformErrors(errors, uiSchema)
    const errorSchema = toErrorSchema<unknown>(errors)
    if (!customValidate) return { errors, errorSchema }
    const handler = customValidate(formData, createErrorHandler<unknown>(formData), uiSchema, errorSchema)
    return validationDataMerge<unknown>({ errors, errorSchema }, unwrapErrorHandler<unknown>(handler))
  },
  isValid(schema: RJSFSchema, formData: unknown, rootSchema: RJSFSchema): boolean {
    // rjsf asks about sub-schemas that may `$ref` into the root's definitions.
    const withDefinitions = schema === rootSchema ? schema : { ...schema, $defs: rootSchema.$defs, definitions: rootSchema.definitions }
    return unitsOf(withDefinitions as RJSFSchema, formData).length === 0
  },
  rawValidation<Result>(schema: RJSFSchema, formData?: unknown): { errors?: Result[]; validationError?: Error } {
    return { errors: unitsOf(schema, formData) as Result[] }
  },
}
