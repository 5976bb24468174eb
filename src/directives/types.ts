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
 * A directive that runs another one (ExecuteIf): the parameter that names it, and the parameters
 * that are the runner's own; every other parameter is the named directive's. When the name is
 * literal, the deploy checks those against the named directive's schema.
 */
export interface RunsDirective {
  readonly nameParam: string;
  readonly ownParams: readonly string[];
}

/**
 * A built-in directive: a name, the schema of its parameters (checked at deploy time, and again at
 * run time for values that came from aliases) and the function that runs it.
 */
export interface DirectiveDefinition<P = Record<string, unknown>> {
  readonly name: string;
  readonly summary: string;
  readonly params: ParamSchema;
  readonly runs?: RunsDirective;
  run(ctx: DirectiveContext, params: P): void | Promise<void>;
}

export function defineDirective<P>(definition: DirectiveDefinition<P>): DirectiveDefinition<P> {
  return definition;
}

/** An empty parameter list. */
export const noParams: ParamSchema = { type: 'object', properties: {}, additionalProperties: false };
