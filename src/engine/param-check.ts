import { createRequire } from 'node:module';
import type { ValidateFunction } from 'ajv';
import type { DirectiveDefinition } from '../directives/types.js';
import { Errors } from '../errors.js';

const validators = new WeakMap<DirectiveDefinition<any>, ValidateFunction>();
const require = createRequire(import.meta.url);
let ajv: import('ajv').default | null = null;

function validatorOf(directive: DirectiveDefinition<any>): ValidateFunction {
  let validate = validators.get(directive);
  if (validate === undefined) {
    if (ajv === null) {
      const Ajv = require('ajv') as typeof import('ajv').default;
      ajv = new Ajv({ allErrors: false, strict: false, coerceTypes: true, allowUnionTypes: true });
    }
    validate = ajv.compile(directive.params);
    validators.set(directive, validate);
  }
  return validate;
}

/**
 * Compiles the checks of these directives now. A spare thread does this for every built-in while
 * no request waits for it: loading ajv and compiling a schema costs a cold start 100 ms otherwise.
 */
export function prepareParamChecks(directives: Iterable<DirectiveDefinition<any>>): void {
  for (const directive of directives) validatorOf(directive);
}

/**
 * Checks parameters against a directive's schema when they were not checked at deploy time (values
 * from aliases, parameters a custom directive passes to `run`). Strings are coerced where the
 * schema wants numbers or booleans ("422" → 422): aliases read strings from queries and headers.
 * Throws a 500 naming the parameter and `where` (an entry label).
 */
export function checkParams(directive: DirectiveDefinition<any>, params: Record<string, unknown>, where: string): void {
  const validate = validatorOf(directive);
  if (validate(params)) return;
  const first = validate.errors?.[0];
  const field = first?.instancePath ? first.instancePath.slice(1).replace(/\//g, '.') : ((first?.params as { missingProperty?: string; additionalProperty?: string })?.missingProperty ?? (first?.params as { additionalProperty?: string })?.additionalProperty ?? '');
  throw Errors.badParameter(`"${field}"`, where, first?.message ?? 'invalid value');
}
