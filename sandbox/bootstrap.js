// Runs first in every fresh isolate context, before a custom directive's own code. It builds the
// `state` facade from two host functions and removes every global the directive must not see.
//
// The host functions arrive as isolated-vm Callbacks: plain functions of this isolate whose
// arguments and results are copied across, never shared (no Reference ever enters the isolate).
// They are captured in this closure and deleted from the global object, so the directive can
// reach them only through `state`.
//
// Host replies are `{ ok: value }` or `{ error: { status, message } }`; an error becomes an
// AnvilFailure thrown here, so a directive may catch it like any error. Asynchronous work
// (`state.run`) starts with a synchronous call that returns a ticket; the host later settles the
// ticket by calling the function it named in `facts.settle`, with the reply.
'use strict';
globalThis.__anvilInstall = function install(hostSync, hostStart, facts, config) {
  delete globalThis.__anvilInstall;

  // The isolate is the security boundary; these globals are removed because no directive needs
  // them and each is a way around a limit: memory outside the heap limit (WebAssembly,
  // SharedArrayBuffer), blocking the isolate's thread (Atomics.wait), and observing the garbage
  // collector (WeakRef, FinalizationRegistry).
  for (const name of ['WebAssembly', 'SharedArrayBuffer', 'Atomics', 'WeakRef', 'FinalizationRegistry']) {
    delete globalThis[name];
  }

  class AnvilFailure extends Error {
    constructor(status, message) {
      super(message);
      this.name = 'AnvilFailure';
      this.status = status;
    }
  }

  const unwrap = (reply) => {
    if (reply !== null && typeof reply === 'object' && reply.error) {
      throw new AnvilFailure(reply.error.status, reply.error.message);
    }
    return reply === null || typeof reply !== 'object' ? undefined : reply.ok;
  };
  const call = (op, a, b) => unwrap(hostSync(op, a, b));
  const tickets = new Map();
  Object.defineProperty(globalThis, facts.settle, {
    value: (ticket, reply) => {
      const settle = tickets.get(ticket);
      tickets.delete(ticket);
      if (settle !== undefined) settle(reply);
    },
  });
  const callAsync = (op, a, b) =>
    new Promise((resolve) => {
      tickets.set(unwrap(hostStart(op, a, b)), resolve);
    }).then(unwrap);

  const frozen = (object) => Object.freeze(Object.setPrototypeOf(object, null));

  const memory = frozen({
    get: (key) => call('memory.get', String(key)),
    set: (key, value) => {
      call('memory.set', String(key), value);
    },
  });

  const message = Object.create(null);
  for (const field of ['verb', 'path', 'headers', 'query', 'pathParams', 'body', 'status']) {
    const writable = field !== 'pathParams';
    Object.defineProperty(message, field, {
      enumerable: true,
      get: () => call('message.get', field),
      set: writable
        ? (value) => {
            call('message.set', field, value);
          }
        : undefined,
    });
  }
  Object.freeze(message);

  const groups = frozen({
    enable: (name) => {
      call('groups.enable', String(name));
    },
    disable: (name) => {
      call('groups.disable', String(name));
    },
    disableAll: () => {
      call('groups.disableAll');
    },
    isEnabled: (name) => call('groups.isEnabled', String(name)) === true,
  });

  const db = frozen({
    all: (sql, params) => call('db.all', String(sql), params === undefined ? null : params),
    get: (sql, params) => call('db.get', String(sql), params === undefined ? null : params),
    run: (sql, params) => call('db.run', String(sql), params === undefined ? null : params),
  });

  const state = frozen({
    id: facts.id,
    memory,
    message,
    groups,
    db,
    map: (name) => call('map', String(name)),
    fail: (status, text) => {
      throw new AnvilFailure(Number(status), String(text === undefined ? '' : text));
    },
    run: (directive, params) => callAsync('run', String(directive), params === undefined ? {} : params),
  });

  // Starts the directive and returns at once: the host runs this (and each later settle) as one
  // task of the isolate, and learns the outcome from the `done` call, whenever it comes.
  // Called by the last line of the directive's script (see sandbox.ts), with the `config` given to install.
  globalThis.__anvilRun = function run() {
    delete globalThis.__anvilRun;
    const done = (outcome) => {
      hostSync('done', outcome);
    };
    // `var __anvilDirective` (the compiled directive) is a global of this call's own context.
    const exported = globalThis.__anvilDirective;
    const fn = exported !== null && typeof exported === 'object' ? exported.default : undefined;
    if (typeof fn !== 'function') {
      done({ failed: { status: 500, message: `${facts.name} has no default export function` } });
      return;
    }
    let result;
    try {
      result = fn(state, config);
    } catch (error) {
      result = Promise.reject(error);
    }
    Promise.resolve(result).then(
      () => done({ done: true }),
      (error) =>
        done(
          error instanceof AnvilFailure
            ? { failed: { status: error.status, message: error.message } }
            : { failed: { status: 500, message: `${facts.name}: ${error instanceof Error ? error.message : String(error)}` } },
        ),
    );
  };
};
