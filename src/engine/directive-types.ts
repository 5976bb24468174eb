import type { FromSchema, JSONSchema } from 'json-schema-to-ts';
import type { DirectiveContext } from '../engine/context.js';
import type { CatalogueEntry } from '../shared/errors.js';

/** JSON Schema (draft 2020-12 subset ajv understands) of a directive's parameter object. */
export type ParamSchema = {
  readonly type: 'object';
  readonly properties: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  readonly patternProperties?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
  readonly required?: readonly string[];
  /** false for built-ins (an unknown parameter is a deploy-time error); custom directives take any. */
  readonly additionalProperties: boolean;
  readonly [keyword: string]: unknown;
};

/**
 * The parameters `run` receives for schema S (values from aliases are checked against it first).
 * The engine does not fill in defaults, so a parameter that has one is still optional.
 */
export type ParamsOf<S> = S extends JSONSchema ? FromSchema<S, { keepDefaultedPropertiesOptional: true }> : never;

/** What a deploy-time check sees of the release besides an entry's own parameters. */
export interface ReleaseView {
  /** The release's maps (Maps/ with Maps/<env>/ merged over it), by name; a map whose file is invalid is absent. */
  readonly maps: Readonly<Record<string, unknown>>;
  /** Every map name found, also those whose file is invalid (their error is reported already). */
  readonly mapNames: ReadonlySet<string>;
  /** A value made once per validated release and shared by every entry's check (a compiler, say). */
  memo<T>(key: string, create: () => T): T;
}

/** A problem a directive's deploy-time check found in one of the entry's parameters. */
export interface DeployIssue {
  param: string;
  message: string;
}

/** What validating api.yaml needs of a built-in directive. */
export type DirectiveChecks = Pick<DirectiveDefinition, 'params' | 'checkRelease' | 'runs' | 'describe'>;

/**
 * A directive that runs another one (ExecuteIf): the parameter that names it, and the parameters
 * that are the runner's own; every other parameter is the named directive's. When the name is
 * literal, the deploy checks those against the named directive's schema.
 */
export interface RunsDirective {
  readonly nameParam: string;
  readonly ownParams: readonly string[];
}

/** Memory keys a directive reads or writes; `<param>` stands for the key a parameter names (`<target>`). */
export interface MemoryEffects {
  readonly reads?: readonly string[];
  readonly writes?: readonly string[];
}

/** An error a directive can end the request with (its code and status come from the catalogue), and when. */
export interface DirectiveFailure {
  readonly error: CatalogueEntry;
  readonly when: string;
}

/**
 * A definition of any directive, as the catalogue and the lookups hold them: each has Params of its
 * own (its run() takes them, so no one Params type covers all), checked against its schema before
 * it runs.
 */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- see above: the schema check stands for the type.
export type AnyDirectiveDefinition = DirectiveDefinition<any>;

/**
 * A built-in directive: a name, the schema of its parameters (checked at deploy time, and again at
 * run time for values that came from aliases) and the function that runs it.
 */
export interface DirectiveDefinition<P = Record<string, unknown>> {
  readonly name: string;
  /** One sentence: what it does (docs/directives.md, and the editor's hover on its name). */
  readonly summary: string;
  readonly params: ParamSchema;
  readonly runs?: RunsDirective;
  /** What it reads from and writes to the request's memory, for docs/directives.md. */
  readonly memory?: MemoryEffects;
  /** How it can fail the request, for docs/directives.md. */
  readonly failures?: readonly DirectiveFailure[];
  /**
   * It reads or writes the API's own data on this instance's disk (its SQLite database, its stored
   * files): in cluster mode such an API is placed on one owner instance (src/front/placement). A function
   * decides per entry from its parameters (aliases still `$.…`); `keepsState` answers for a
   * directive the entry runs in turn.
   */
  readonly localState?:
    boolean | ((params: Readonly<Record<string, unknown>>, keepsState: (directive: string) => boolean) => boolean);
  /** The parameters of a typical entry, for docs/directives.md (a test checks them against `params`). */
  readonly example?: Readonly<Record<string, unknown>>;
  /**
   * Deploy-time checks that need more of the release than the parameter values (e.g. a map a
   * parameter names). Runs once the parameters passed their schema; aliases are still `$.…` strings.
   */
  checkRelease?(params: Readonly<Record<string, unknown>>, release: ReleaseView): DeployIssue[];
  /** What an entry of this directive tells an OpenAPI description of its endpoint (src/deploy/openapi); aliases are still `$.…` strings. */
  describe?(params: Readonly<Record<string, unknown>>): OpenApiHints;
  run(ctx: DirectiveContext, params: P): void | Promise<void>;
}

/**
 * What one entry adds to its endpoint's OpenAPI operation: the statuses it can answer with, the
 * credential it checks (an alias of a header or query parameter), and models it takes from the
 * request body or validates (their schema is the map of that name).
 */
export interface OpenApiHints {
  responses?: Record<number, string>;
  credential?: string;
  /** The memory name the whole request body is loaded into. */
  bodyModel?: string;
  /** A memory name validated against the map of the same name. */
  validatesModel?: string;
}

/** The aliases of the whole request body (the parsed JSON): a model loaded from one of them is the request's body model. */
export const WHOLE_BODY: ReadonlySet<string> = new Set(['$.message.body', '$.message.bodyAsArray']);

/**
 * A built-in directive whose `run` is typed by its `params` schema, the only declaration of its
 * parameters. `const S` keeps the literal types of a schema written in place; a piece of schema
 * declared apart needs `as const` (else `type: string` is refused here).
 */
export function defineDirective<const S extends ParamSchema & JSONSchema>(
  definition: DirectiveDefinition<ParamsOf<S>> & { readonly params: S },
): DirectiveDefinition<ParamsOf<S>> {
  return definition;
}

/** An empty parameter list. */
export const noParams = { type: 'object', properties: {}, additionalProperties: false } as const satisfies ParamSchema;

/** `status` (4xx or 5xx) and `message`, both optional: the parameters of directives that fail the request with them. */
export const statusAndMessageParams = {
  type: 'object',
  properties: {
    status: { type: 'integer', minimum: 400, maximum: 599 },
    message: { type: 'string' },
  },
  additionalProperties: false,
} as const satisfies ParamSchema;
