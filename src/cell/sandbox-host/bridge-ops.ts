/**
 * The one table of the sandbox bridge: what the host asks of the bootstrap's `entry`
 * (`EntryKind`), and what the bootstrap asks of the host (`BridgeOp`: the operations of `state`,
 * and `done` of a call that awaited). sandbox/bootstrap.js is plain JS evaluated inside the
 * isolate: it gets these very objects as a value when a context is set up (`bridgeCodes`,
 * sandbox-context.ts) and reads each code once, into a constant, so a call costs nothing more
 * than passing a small integer (no string is copied across per operation).
 * test/unit/bridge-ops.test.ts fails when the bootstrap asks for a code this table lacks, or
 * leaves one of its operations unused.
 */

/** What the host asks of the bootstrap's `entry(kind, callId, …)`. */
export const EntryKind = Object.freeze({
  /** `(name, exported)`: a directive's module was evaluated; keep its default export. */
  Define: 0,
  /** `(name, configJson, requestId)`: run one call. */
  Call: 1,
  /** `(ticket, reply)`: the host's reply to a `state.run` the call awaits. */
  Settle: 2,
  /** `()`: drop what the call still awaits. */
  Forget: 3,
  /** `(count)`: run the parts of a call that need no host `count` times (a spare context's warm-up). */
  Warm: 4,
} as const);
export type EntryKind = (typeof EntryKind)[keyof typeof EntryKind];

/** What the bootstrap asks of the host: `host(op, callId, a, b)`. */
export const BridgeOp = Object.freeze({
  memoryGet: 0,
  memorySet: 1,
  messageGet: 2,
  messageSet: 3,
  groupsEnable: 4,
  groupsDisable: 5,
  groupsDisableAll: 6,
  groupsIsEnabled: 7,
  map: 8,
  dbAll: 9,
  dbGet: 10,
  dbRun: 11,
  run: 12,
  done: 13,
  messageAddHeader: 14,
  refuse: 15,
} as const);
export type BridgeOpName = keyof typeof BridgeOp;
export type BridgeOpCode = (typeof BridgeOp)[BridgeOpName];
/** The operations a call's HostBridge answers: every one but `done`, which the sandbox itself takes. */
export type StateOpCode = Exclude<BridgeOpCode, typeof BridgeOp.done>;

/** Fields of `state.message` (`messageGet`: all of them; `messageSet`: all but `pathParams`). */
export type MessageField = 'verb' | 'path' | 'status' | 'headers' | 'query' | 'pathParams' | 'body';
/**
 * What `messageSet` may set: a field, or `bodyJson`, the body as the JSON text the bootstrap made of
 * a value that is not a string (made in the isolate, so the isolate's limits bound it).
 */
export type MessageSetField = Exclude<MessageField, 'pathParams'> | 'bodyJson';

/**
 * What the bootstrap passes (`a`, `b`) and what the host answers, by operation. Arguments and
 * results cross as copies; the host checks the arguments anyway (a directive's values pass through
 * them). A result of `undefined` is no reply at all (nothing is copied back); an operation that
 * fails answers `{ error: { status, message } }` instead (HostReply, host-bridge.ts).
 */
export interface BridgeOpShapes {
  memoryGet: { args: [key: string]; result: unknown /* the value, null when there is none */ };
  memorySet: { args: [key: string, value: unknown]; result: undefined };
  messageGet: { args: [field: MessageField]; result: unknown };
  messageSet: { args: [field: MessageSetField, value: unknown]; result: undefined };
  /** One response header added, the others kept (Message.addHeader: `set-cookie` values add up). */
  messageAddHeader: { args: [name: string, value: unknown /* a string or a list of strings */]; result: undefined };
  groupsEnable: { args: [group: string]; result: undefined };
  groupsDisable: { args: [group: string]; result: undefined };
  groupsDisableAll: { args: []; result: undefined };
  groupsIsEnabled: { args: [group: string]; result: boolean };
  map: { args: [name: string]; result: unknown /* the map, null when there is none */ };
  dbAll: { args: [sql: string, params: unknown /* null: none */]; result: unknown };
  dbGet: {
    args: [sql: string, params: unknown /* null: none */];
    result: unknown; /* the row, null when there is none */
  };
  dbRun: { args: [sql: string, params: unknown /* null: none */]; result: unknown };
  /** Starts a directive (a built-in or the API's own); its reply comes later, through `entry(Settle, callId, ticket, reply)`. */
  run: { args: [directive: string, params: unknown]; result: number /* the ticket */ };
  /**
   * The bootstrap measured a value a directive hands the host (sandbox/bootstrap.js `bounded`) and
   * it is more than the API's memory limit: it was not copied, and the reply is that error.
   */
  refuse: { args: [what: string, bytes: number]; result: never };
  /** A call that awaited is over: undefined, or "<status> <message>" when it failed. */
  done: { args: [outcome: string | undefined]; result: undefined };
}

export type BridgeArgs<Name extends keyof BridgeOpShapes> = BridgeOpShapes[Name]['args'];
export type BridgeResult<Name extends keyof BridgeOpShapes> = BridgeOpShapes[Name]['result'];

/** Every operation has a shape, and every shape an operation (a compile error otherwise). */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Assert<T extends true> = T;
export type BridgeShapesCoverOps = Assert<Same<keyof BridgeOpShapes, BridgeOpName>>;

/** The codes as the bootstrap's `__anvilInstall(host, codes, valueMax)` gets them. */
export const bridgeCodes = Object.freeze({ entry: EntryKind, ops: BridgeOp });
