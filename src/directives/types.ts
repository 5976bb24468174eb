import type { DirectiveContext } from '../engine/context.js';

/** JSON Schema (draft 2020-12 subset ajv understands) of a directive's parameter object. */
export type ParamSchema = {
  type: 'object';
  properties: Record<string, Record<string, unknown>>;
  patternProperties?: Record<string, Record<string, unknown>>;
  required?: string[];
  /** false for built-ins (an unknown parameter is a deploy-time error); custom directives take any. */
  additionalProperties: boolean;
  [keyword: string]: unknown;
};

/**
 * A built-in directive: a name, the schema of its parameters (checked at deploy time, and again at
 * run time for values that came from aliases) and the function that runs it.
 */
export interface DirectiveDefinition<P = Record<string, unknown>> {
  readonly name: string;
  readonly summary: string;
  readonly params: ParamSchema;
  run(ctx: DirectiveContext, params: P): void | Promise<void>;
}

export function defineDirective<P>(definition: DirectiveDefinition<P>): DirectiveDefinition<P> {
  return definition;
}

/** An empty parameter list. */
export const noParams: ParamSchema = { type: 'object', properties: {}, additionalProperties: false };
