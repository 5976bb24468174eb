/**
 * Typings for Anvil custom directives (`Directives/<Name>.ts` or `.js` in an API folder).
 *
 *   import type { Directive } from '../../sandbox/directive';   // path to this file, for your editor
 *
 *   const ReadUser: Directive<{ id: string }> = (state, config) => {
 *     const user = state.db.get('select id, name from users where id = ?', [config.id]);
 *     if (!user) return state.fail(404, 'user not found');   // `return`: TypeScript narrows `user` after it
 *     state.memory.set('user', user);
 *   };
 *   export default ReadUser;
 *
 * A directive runs in a V8 isolate: no Node API, no `require`, no `process`, no file system, no
 * network, no timers, and built-ins that cannot be changed (they are frozen). Its module is
 * evaluated once per sandbox, so module-level state may persist between calls of the same API on the
 * same thread: never rely on it, it may be reset at any time. Everything it reads or writes goes
 * through `state`, and values are copied in and out (the config arrives as JSON).
 */

/** JSON-like values: what crosses between a directive and Anvil (copied, never shared). */
export type Value = null | boolean | number | string | Value[] | { [key: string]: Value };

export interface DirectiveState {
  /** The request id (the job id when the request runs as a job). */
  readonly id: string;

  /** Request memory, the `$.memory.…` of api.yaml. Keys may be dotted: `user.name`. */
  readonly memory: {
    get(key: string): Value;
    set(key: string, value: Value): void;
  };

  /** The message (SPEC §4): the request at first; what you set here makes the response. */
  readonly message: {
    verb: string;
    path: string;
    /** Lower-case names. Setting replaces every header; only headers you set reach the response. */
    headers: Record<string, string | string[]>;
    query: Record<string, string | string[]>;
    readonly pathParams: Record<string, string>;
    /** A JSON body arrives parsed, any other as text, none as null. Set a string, or a value (sent as JSON). */
    body: Value;
    status: number;
    /**
     * Adds one response header and keeps the others (setting `headers` replaces them all). A name
     * already set is replaced, except `set-cookie`, whose values add up.
     */
    addHeader(name: string, value: string | string[]): void;
  };

  /** Flow groups (case-insensitive), as the Groups directive edits them. */
  readonly groups: {
    enable(name: string): void;
    disable(name: string): void;
    disableAll(): void;
    isEnabled(name: string): boolean;
  };

  /** A map of the API (`Maps/<name>.json` with the env's overrides), or null. */
  map(name: string): Value;

  /**
   * The API's own SQLite database, with bound parameters only (`?` with a list, `:name` with an
   * object). ATTACH, VACUUM, PRAGMA and load_extension are refused. Inside the request's
   * transaction (DatabaseBeginTransaction) when one is open; a write while another request's
   * transaction is open on this thread fails with 503.
   */
  readonly db: {
    all(sql: string, params?: Value[] | Record<string, Value>): Array<Record<string, Value>>;
    get(sql: string, params?: Value[] | Record<string, Value>): Record<string, Value> | null;
    run(sql: string, params?: Value[] | Record<string, Value>): { changes: number; lastInsertRowid: number | string };
  };

  /**
   * Ends the directive with an error of that status (400–599): the flow switches to ERROR_FLOW.
   * Write `return state.fail(…)`: TypeScript narrows after a bare call of a `never` function only
   * when `state` is annotated by hand (`(state: DirectiveState) => …`), not in a `Directive<…>`.
   */
  fail(status: number, message: string): never;

  /**
   * Runs a directive with these parameters against this request: a built-in, e.g. run('ModifyMessage',
   * { status: 201 }), or another custom directive of the API (its time counts against this call's
   * limits; nesting deeper than 8 fails with 508). A call may have 256 runs under way at once (16
   * running, the others waiting their turn): the next one throws at once (ANVIL_ERR_SANDBOX_RUNS).
   * Runs are part of this call: once it ends, those not begun are dropped and the others no longer
   * awaited (their promises never settle), so await what must happen.
   */
  run(directive: string, params?: Record<string, Value>): Promise<void>;
}

/** A custom directive: the default export of its file. May be async. */
export type Directive<Config extends Record<string, unknown> = Record<string, Value>> = (
  state: DirectiveState,
  config: Config,
) => void | Promise<void>;
