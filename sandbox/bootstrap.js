// Runs in the isolates of custom directives. Evaluated once into the snapshot every sandbox isolate
// starts from, where it freezes the realm's built-ins (`builtinLockdown`, at the end);
// `__anvilInstall(host, codes, valueMax, lockdownMode)` is then called once per context, before any
// directive code: it removes the globals no directive may use, finishes the lockdown, and returns
// the one function the host calls for everything (`entry`).
//
// `codes` is the bridge's table, src/cell/sandbox-host/bridge-ops.ts, as a copied value: what the host
// passes as `entry`'s kind (`codes.entry`) and what this file passes as `host`'s operation
// (`codes.ops`), with their argument and result shapes there. Each code is read once, here, into a
// constant; a name the table lacks fails the install (test/unit/bridge-ops.test.ts checks both ways).
//
// One context serves many calls of one API release on one thread (sandbox.ts): a directive's module
// is evaluated once and its module-level state may persist between calls. What must never persist
// is a change to the built-ins (a polluted `Object.prototype` would turn one client's request into
// every later request's problem), so they are frozen here, in the manner of SES's lockdown.
//
// The host function arrives as an isolated-vm Callback: a plain function of this isolate whose
// arguments and results are copied across, never shared (no Reference ever enters the isolate).
// It is captured in this closure, so a directive can reach it only through its `state`.
//
// Every value a directive hands the host (`memory.set`, the message's fields, SQL parameters,
// `run`'s parameters) is measured here before it is copied out (`bounded`), as the host counts what
// it holds (src/engine/host-memory.ts `hostBytes`): past the API's memory limit (`valueMax`, bytes)
// it is refused without a copy, through `host(REFUSE, …)`, whose error is thrown to the directive.
// A body that is not a string is encoded as JSON here, where the isolate's own limits bound the
// work, and crosses as that text. The host measures what arrives all the same (a getter may answer
// the copy differently than the measure).
//
// Host replies are `{ ok: value }` or `{ error: { status, message } }`; an error becomes an
// AnvilFailure thrown here, so a directive may catch it like any error. Asynchronous work
// (`state.run`) starts with a synchronous call that returns a ticket; the host later settles the
// ticket through `entry(SETTLE, …)` with the reply.
'use strict';
globalThis.__anvilInstall = (() => {
  const lockdown = builtinLockdown();
  lockdown.inSnapshot();

  return function install(host, codes, valueMax, lockdownMode) {
    delete globalThis.__anvilInstall;

    /** A code of the host's table; a name it lacks fails the install (every call would fail). */
    const codeOf = (table, name) => {
      const value = codes[table][name];
      if (typeof value !== 'number') throw new Error(`bootstrap: the host's bridge table has no ${table}.${name}`);
      return value;
    };
    // What the host passes as `entry`'s kind.
    const DEFINE = codeOf('entry', 'Define');
    const CALL = codeOf('entry', 'Call');
    const SETTLE = codeOf('entry', 'Settle');
    const FORGET = codeOf('entry', 'Forget');
    const WARM = codeOf('entry', 'Warm');
    // What this file passes as `host`'s operation.
    const MEMORY_GET = codeOf('ops', 'memoryGet');
    const MEMORY_SET = codeOf('ops', 'memorySet');
    const MESSAGE_GET = codeOf('ops', 'messageGet');
    const MESSAGE_SET = codeOf('ops', 'messageSet');
    const MESSAGE_ADD_HEADER = codeOf('ops', 'messageAddHeader');
    const GROUPS_ENABLE = codeOf('ops', 'groupsEnable');
    const GROUPS_DISABLE = codeOf('ops', 'groupsDisable');
    const GROUPS_DISABLE_ALL = codeOf('ops', 'groupsDisableAll');
    const GROUPS_IS_ENABLED = codeOf('ops', 'groupsIsEnabled');
    const MAP = codeOf('ops', 'map');
    const DB_ALL = codeOf('ops', 'dbAll');
    const DB_GET = codeOf('ops', 'dbGet');
    const DB_RUN = codeOf('ops', 'dbRun');
    const RUN = codeOf('ops', 'run');
    const DONE = codeOf('ops', 'done');
    const REFUSE = codeOf('ops', 'refuse');

    // The isolate is the security boundary; these globals are removed because no directive needs
    // them and each is a way around a limit: memory outside the heap limit (WebAssembly,
    // SharedArrayBuffer), blocking the isolate's thread (Atomics.wait), and observing the garbage
    // collector (WeakRef, FinalizationRegistry).
    for (const name of ['WebAssembly', 'SharedArrayBuffer', 'Atomics', 'WeakRef', 'FinalizationRegistry']) {
      delete globalThis[name];
    }
    const proxies = trackProxies();
    lockdown.inContext(lockdownMode === 'thorough');

    /** The longest error message a directive can hand back (a thrown 100 MB string stays here). */
    const MESSAGE_MAX = 8192;
    /** The most a value a directive hands the host may take, bytes: the API's memory limit, which the host counts it against. */
    const VALUE_MAX = typeof valueMax === 'number' && valueMax > 0 ? valueMax : Infinity;
    const measure = measurer(proxies);

    class AnvilFailure extends Error {
      constructor(status, message) {
        super(message);
        this.name = 'AnvilFailure';
        this.status = status;
      }
    }
    Object.freeze(AnvilFailure.prototype);
    Object.freeze(AnvilFailure);

    // An operation that gives nothing back replies undefined (nothing to copy).
    const unwrap = (reply) => {
      if (reply === undefined || reply === null || typeof reply !== 'object') return undefined;
      if (reply.error) throw new AnvilFailure(reply.error.status, reply.error.message);
      return reply.ok;
    };

    /** Directive name → its default export, or the message of why its module cannot be used. */
    const directives = new Map();

    /** Passed to the constructors of `state` and `state.message`, which make nothing without it. */
    const MADE_HERE = Object.freeze({});
    /** Calls still running after their first stretch (they await): call id → tickets → resolve. */
    const pending = new Map();

    /** One operation of the call `callId` on the host; a reply with an error throws here. */
    const op = (callId, code, a, b) => unwrap(host(code, callId, a, b));

    /**
     * `value`, when it is within the limit of what a directive may hand the host; else the host's
     * refusal is thrown, and the value is never copied. `asJson`: measured as the JSON it is about to
     * become (a typed array becomes an object of numbers).
     */
    const bounded = (callId, value, what, asJson) => {
      const bytes = measure(value, VALUE_MAX, asJson === true);
      if (bytes > VALUE_MAX) op(callId, REFUSE, what, bytes === Infinity ? -1 : bytes);
      return value;
    };
    /** A key or name as a short text for an error message. */
    const shown = (name) => (name.length > 100 ? `${name.slice(0, 100)}…` : name);

    /** The body as the host takes it: text, null, or a value as its JSON text (`bodyJson`), measured first. */
    const setBody = (callId, value) => {
      if (value === undefined || value === null) return op(callId, MESSAGE_SET, 'body', null);
      if (typeof value === 'string') return op(callId, MESSAGE_SET, 'body', bounded(callId, value, 'message.body'));
      const json = JSON.stringify(bounded(callId, value, 'message.body', true));
      if (typeof json !== 'string') throw new TypeError(`message.body: a ${typeof value} cannot be sent as JSON`);
      return op(callId, MESSAGE_SET, 'bodyJson', bounded(callId, json, 'message.body'));
    };

    /**
     * `state.message` of a call. A class, so that making one per call costs one small object (its
     * accessors live on the frozen prototype; a getter called on another object throws a TypeError).
     * Its constructor, reachable from the prototype, makes none for a directive (MADE_HERE): a message
     * of another call of the API, by its id, is not to be had.
     */
    class MessageFacade {
      #call;
      constructor(made, callId) {
        if (made !== MADE_HERE) throw new TypeError('state.message is made by Anvil, not by a directive');
        this.#call = callId;
        Object.freeze(this);
      }
      get verb() {
        return op(this.#call, MESSAGE_GET, 'verb');
      }
      set verb(value) {
        op(this.#call, MESSAGE_SET, 'verb', bounded(this.#call, value, 'message.verb'));
      }
      get path() {
        return op(this.#call, MESSAGE_GET, 'path');
      }
      set path(value) {
        op(this.#call, MESSAGE_SET, 'path', bounded(this.#call, value, 'message.path'));
      }
      get headers() {
        return op(this.#call, MESSAGE_GET, 'headers');
      }
      set headers(value) {
        op(this.#call, MESSAGE_SET, 'headers', bounded(this.#call, value, 'message.headers'));
      }
      get query() {
        return op(this.#call, MESSAGE_GET, 'query');
      }
      set query(value) {
        op(this.#call, MESSAGE_SET, 'query', bounded(this.#call, value, 'message.query'));
      }
      get pathParams() {
        return op(this.#call, MESSAGE_GET, 'pathParams');
      }
      get body() {
        return op(this.#call, MESSAGE_GET, 'body');
      }
      set body(value) {
        setBody(this.#call, value);
      }
      get status() {
        return op(this.#call, MESSAGE_GET, 'status');
      }
      set status(value) {
        op(this.#call, MESSAGE_SET, 'status', bounded(this.#call, value, 'message.status'));
      }
      addHeader(name, value) {
        const header = String(name);
        op(
          this.#call,
          MESSAGE_ADD_HEADER,
          bounded(this.#call, header, 'a header name'),
          bounded(this.#call, value, `the value of message.addHeader("${shown(header)}")`),
        );
      }
      toJSON() {
        const { verb, path, headers, query, pathParams, body, status } = this;
        return { verb, path, headers, query, pathParams, body, status };
      }
    }
    Object.freeze(MessageFacade.prototype);
    Object.freeze(MessageFacade);

    /** An operation that settles later (`state.run`): what the host refuses throws right here, where the directive sees it even if it never awaits the promise. */
    const callAsync = (callId, code, a, b) => {
      const ticket = op(callId, code, a, b);
      return new Promise((resolve) => {
        let tickets = pending.get(callId);
        if (tickets === undefined) {
          tickets = new Map();
          pending.set(callId, tickets);
        }
        tickets.set(ticket, resolve);
      }).then(unwrap);
    };

    const fail = Object.freeze((status, text) => {
      throw new AnvilFailure(Number(status), String(text === undefined ? '' : text));
    });

    const memoryOf = (callId) =>
      Object.freeze({
        get: (key) => op(callId, MEMORY_GET, String(key)),
        set: (key, value) => {
          const name = bounded(callId, String(key), 'a memory key');
          op(callId, MEMORY_SET, name, bounded(callId, value, `the value of memory.set("${shown(name)}")`));
        },
      });

    const groupsOf = (callId) =>
      Object.freeze({
        enable: (name) => {
          op(callId, GROUPS_ENABLE, String(name));
        },
        disable: (name) => {
          op(callId, GROUPS_DISABLE, String(name));
        },
        disableAll: () => {
          op(callId, GROUPS_DISABLE_ALL);
        },
        isEnabled: (name) => op(callId, GROUPS_IS_ENABLED, String(name)) === true,
      });

    const dbOf = (callId) =>
      Object.freeze({
        all: (sql, params) =>
          op(
            callId,
            DB_ALL,
            bounded(callId, String(sql), 'the SQL of db.all'),
            params === undefined ? null : bounded(callId, params, 'the parameters of db.all'),
          ),
        get: (sql, params) =>
          op(
            callId,
            DB_GET,
            bounded(callId, String(sql), 'the SQL of db.get'),
            params === undefined ? null : bounded(callId, params, 'the parameters of db.get'),
          ),
        run: (sql, params) =>
          op(
            callId,
            DB_RUN,
            bounded(callId, String(sql), 'the SQL of db.run'),
            params === undefined ? null : bounded(callId, params, 'the parameters of db.run'),
          ),
      });

    const runOf = (callId) =>
      Object.freeze((directive, params) => {
        const name = String(directive);
        let checked;
        try {
          checked = params === undefined ? {} : bounded(callId, params, `the parameters of run("${shown(name)}")`);
        } catch (error) {
          return Promise.reject(error);
        }
        return callAsync(callId, RUN, name, checked);
      });

    /**
     * The `state` one call gets: every operation carries the call's id, so it acts on that request
     * only. One small frozen object whose parts (`memory`, `message`, `db`, `run`, …) are made the
     * first time the directive reads them: a call that only sets its body makes two small objects,
     * not twenty functions — in the isolate of a lightly used API, whose code V8 has not optimized,
     * making them was most of a call's own cost. A part, once made, is the same object on every read
     * of that call, frozen, and may be taken apart (`const { get } = state.memory`, `const { run } =
     * state`). Its accessors live on the frozen prototype; one called on another object throws a
     * TypeError. Like MessageFacade's, its constructor makes none for a directive.
     */
    class State {
      #call;
      #request;
      #memory;
      #message;
      #groups;
      #db;
      #map;
      #run;
      constructor(made, callId, requestId) {
        if (made !== MADE_HERE) throw new TypeError('state is made by Anvil, not by a directive');
        this.#call = callId;
        this.#request = requestId;
        Object.freeze(this);
      }
      get id() {
        return this.#request;
      }
      get memory() {
        return (this.#memory ??= memoryOf(this.#call));
      }
      get message() {
        return (this.#message ??= new MessageFacade(MADE_HERE, this.#call));
      }
      get groups() {
        return (this.#groups ??= groupsOf(this.#call));
      }
      get db() {
        return (this.#db ??= dbOf(this.#call));
      }
      get map() {
        const callId = this.#call;
        return (this.#map ??= Object.freeze((name) => op(callId, MAP, String(name))));
      }
      get fail() {
        return fail;
      }
      get run() {
        return (this.#run ??= runOf(this.#call));
      }
    }
    Object.freeze(State.prototype);
    Object.freeze(State);

    /**
     * A failure as the host reads it: "<status> <message>", a string, so that it crosses without a
     * copy. Never throws, whatever was thrown.
     */
    function failure(name, error) {
      try {
        if (error instanceof AnvilFailure) return `${error.status} ${String(error.message).slice(0, MESSAGE_MAX)}`;
        const text = error instanceof Error ? String(error.message) : String(error);
        return `500 ${`${name}: ${text}`.slice(0, MESSAGE_MAX)}${error instanceof Error ? thrownAt(error) : ''}`;
      } catch {
        return `500 ${name}: threw a value that cannot be shown`;
      }
    }

    /**
     * Where in a directive's compiled code an error was made, from its stack's first frame in a
     * directive ("\n@ <name>:<line>:<column>", the host maps it back to the author's file), or "".
     */
    function thrownAt(error) {
      try {
        const match = /file:\/\/\/Directives\/([A-Za-z0-9_$-]{1,100})\.js:(\d{1,7}):(\d{1,7})/.exec(
          String(error.stack),
        );
        return match === null ? '' : `\n@ ${match[1]}:${match[2]}:${match[3]}`;
      } catch {
        return '';
      }
    }

    function define(name, exported) {
      const fn = exported !== null && typeof exported === 'object' ? exported.default : undefined;
      directives.set(name, typeof fn === 'function' ? fn : `${name} has no default export function`);
    }

    /**
     * Runs one call (its config arrives as JSON text: a string crosses without a copy). Returns
     * undefined when it finished, "<status> <message>" when it failed, or 1 when it awaits: its
     * outcome then reaches the host through `host(DONE, …)`, from a later stretch (or from this
     * one's microtasks, when what it awaited was already settled).
     */
    function run(callId, name, configJson, requestId) {
      const fn = directives.get(name);
      if (typeof fn !== 'function') return `500 ${fn === undefined ? `${name} is not loaded` : fn}`;
      let result;
      try {
        result = fn(new State(MADE_HERE, callId, requestId), configJson === '{}' ? {} : JSON.parse(configJson));
      } catch (error) {
        pending.delete(callId);
        return failure(name, error);
      }
      if (result === undefined || result === null || (typeof result !== 'object' && typeof result !== 'function')) {
        // Operations it started and did not await are never resumed: the call is over.
        pending.delete(callId);
        return undefined;
      }
      if (!pending.has(callId)) pending.set(callId, new Map());
      const done = (outcome) => {
        if (!pending.delete(callId)) return;
        host(DONE, callId, outcome);
      };
      Promise.resolve(result).then(
        () => done(undefined),
        (error) => done(failure(name, error)),
      );
      return 1;
    }

    function settle(callId, ticket, reply) {
      const tickets = pending.get(callId);
      const resolve = tickets === undefined ? undefined : tickets.get(ticket);
      if (resolve === undefined) return;
      tickets.delete(ticket);
      resolve(reply);
    }

    // The host's check of the snapshot's lockdown (a context made for it alone, never called).
    if (lockdownMode === 'check') return lockdown.openCount();

    /**
     * The parts of every call that need no host, `count` times, on values like a call's: a spare
     * context's warm-up (sandbox-spares.ts), on isolated-vm's own thread, so that V8 optimizes them
     * there. In a hundred APIs' isolates taking the same traffic V8 otherwise optimized them in all
     * at about the same call, on their shared thread: ~5 ms of compiling per isolate at once, a
     * stall of a few hundred ms for every API on the thread (bench/RESULTS.md § 13d).
     */
    function warm(count) {
      const body = { message: 'warm' };
      for (let i = 0; i < count; i++) {
        void new State(MADE_HERE, 0, 'warm').message;
        bounded(0, JSON.stringify(bounded(0, body, 'message.body', true)), 'message.body');
      }
    }

    return function entry(kind, callId, a, b, c) {
      if (kind === CALL) return run(callId, a, b, c);
      if (kind === SETTLE) return settle(callId, a, b);
      if (kind === DEFINE) return define(a, b);
      if (kind === FORGET) pending.delete(callId);
      if (kind === WARM) warm(a);
      return undefined;
    };

    /**
     * The Proxies directives make, in a set only the measure reads: `Proxy` becomes a Proxy of itself
     * that records what it constructs (`Proxy.revocable` too). The measure must not touch a Proxy (its
     * traps would run, in the isolate, and the copy refuses it anyway), and nothing in JS tells one
     * from its target without touching it. One reached another way (the native `revocable` through
     * its descriptor) is measured like any object, its traps run here, and the copy refuses it all the same.
     */
    function trackProxies() {
      const NativeProxy = Proxy;
      const { construct, get } = Reflect;
      const made = new WeakSet();
      const nativeRevocable = NativeProxy.revocable;
      const revocable = (target, handler) => {
        const pair = nativeRevocable(target, handler);
        made.add(pair.proxy);
        return pair;
      };
      globalThis.Proxy = new NativeProxy(NativeProxy, {
        construct(target, args, newTarget) {
          const proxy = construct(target, args, newTarget);
          made.add(proxy);
          return proxy;
        },
        get: (target, key, receiver) => (key === 'revocable' ? revocable : get(target, key, receiver)),
      });
      return made;
    }

    /**
     * The measure of `bounded`: what a value costs the host once copied, with the weights of
     * src/engine/host-memory.ts `hostBytes` (strings by length; 8 bytes a number and a slot, an array
     * by its length, holes included; keys by length; Map and Set entries; an Error's message and
     * stack; a RegExp's source; a buffer's bytes, all of a view's buffer, which is what the copy
     * carries). Stops as soon as the count passes `cap`, and after MAX_VALUES values (Infinity):
     * measuring costs no more than `cap` bytes' worth of the value, in this isolate's CPU time.
     * The built-ins it reads with are captured here: a directive's own `size` or `byteLength`
     * property on a Map or a typed array cannot answer for them.
     */
    function measurer(proxies) {
      const MAX_VALUES = 1_000_000;
      const { apply, getPrototypeOf } = Reflect;
      const { getOwnPropertyDescriptor, keys } = Object;
      const getter = (proto, key) => getOwnPropertyDescriptor(proto, key).get;
      const mapSize = getter(Map.prototype, 'size');
      const mapForEach = Map.prototype.forEach;
      const setSize = getter(Set.prototype, 'size');
      const setForEach = Set.prototype.forEach;
      const bufferBytes = getter(ArrayBuffer.prototype, 'byteLength');
      const TypedArrayPrototype = getPrototypeOf(Uint8Array.prototype);
      const typedBuffer = getter(TypedArrayPrototype, 'buffer');
      const typedLength = getter(TypedArrayPrototype, 'length');
      const dataViewBuffer = getter(DataView.prototype, 'buffer');
      const regExpSource = getter(RegExp.prototype, 'source');
      const stringValue = String.prototype.valueOf;
      const { isView } = ArrayBuffer;
      const { isArray } = Array;
      const ObjectPrototype = Object.prototype;
      const ArrayPrototype = Array.prototype;
      /** `fn` applied to `value`, or undefined when `value` is not of its kind (a brand check). */
      const branded = (fn, value) => {
        try {
          return apply(fn, value, []);
        } catch {
          return undefined;
        }
      };
      const ownString = (value, key) => {
        const descriptor = getOwnPropertyDescriptor(value, key);
        return descriptor !== undefined && typeof descriptor.value === 'string' ? descriptor.value.length : 0;
      };

      /**
       * A plain object's own values are read here, once each; its primitive ones are counted here, and
       * the others left to `measureAll`. The common value (a body of a few fields) is measured without
       * the general loop: that loop, made hot in every API's isolate at about the same call when a
       * hundred APIs take the same traffic, was optimized by V8 in all of them at once, holding their
       * shared thread for ~100 ms (bench/RESULTS.md § 13c).
       */
      return function measure(value, cap, asJson) {
        if (typeof value === 'string') return value.length;
        if (value === null || typeof value !== 'object' || proxies.has(value)) return 8;
        const proto = getPrototypeOf(value);
        if (isArray(value) || (proto !== ObjectPrototype && proto !== null))
          return measureAll([value], 0, 0, cap, asJson);
        const names = keys(value);
        if (names.length >= MAX_VALUES) return Infinity;
        let bytes = 32;
        let rest = null;
        for (let i = 0; i < names.length; i++) {
          const item = value[names[i]];
          bytes += names[i].length + 16;
          if (typeof item === 'string') bytes += item.length + 16;
          // As `measureAll` counts them: a function (a Proxy of one too) as 8, a bigint by its digits.
          else if (item === null || (typeof item !== 'object' && typeof item !== 'bigint')) bytes += 8;
          else (rest ??= []).push(item);
          if (bytes > cap) return bytes;
        }
        return rest === null ? bytes : measureAll(rest, bytes, 1 + names.length - rest.length, cap, asJson);
      };

      /** What `stack`'s values hold, added to `bytes` (`visited` of them so far). */
      function measureAll(stack, bytes, visited, cap, asJson) {
        let buffers = null;
        while (stack.length > 0) {
          const node = stack.pop();
          if (++visited > MAX_VALUES) return Infinity;
          if (typeof node === 'string') bytes += node.length + 16;
          // Never touched: the copy refuses it (its traps never run), and a measure would run them.
          else if (proxies.has(node)) bytes += 8;
          else if (typeof node === 'bigint') bytes += 16 + node.toString(16).length;
          else if (node === null || typeof node !== 'object') bytes += 8;
          else if (isView(node)) {
            const typed = branded(typedBuffer, node);
            const buffer = typed !== undefined ? typed : branded(dataViewBuffer, node);
            if (buffers === null) buffers = new Set();
            bytes += 64 + (buffers.has(buffer) ? 0 : apply(bufferBytes, buffer, []));
            buffers.add(buffer);
            // As JSON, a typed array is an object of numbers.
            if (asJson && typed !== undefined) bytes += 8 * apply(typedLength, node, []);
          } else if (isArray(node)) {
            const length = node.length;
            bytes += 16 + 8 * length;
            // Checked before its elements are read: a sparse array of a huge length is refused at once.
            if (bytes > cap) return bytes;
            for (let i = 0; i < length; i++) stack.push(node[i]);
          } else {
            bytes += 32;
            const proto = getPrototypeOf(node);
            if (proto !== ObjectPrototype && proto !== null && proto !== ArrayPrototype) {
              let size;
              if ((size = branded(mapSize, node)) !== undefined) {
                bytes += 16 * size;
                if (bytes > cap) return bytes;
                apply(mapForEach, node, [(item, key) => stack.push(key, item)]);
              } else if ((size = branded(setSize, node)) !== undefined) {
                bytes += 8 * size;
                if (bytes > cap) return bytes;
                apply(setForEach, node, [(item) => stack.push(item)]);
              } else if ((size = branded(bufferBytes, node)) !== undefined) bytes += size;
              else if ((size = branded(regExpSource, node)) !== undefined) bytes += size.length;
              else if ((size = branded(stringValue, node)) !== undefined) bytes += size.length;
              // An Error's message and stack are its own, not enumerable; any object's are counted.
              else bytes += ownString(node, 'message') + ownString(node, 'stack');
            }
            const names = keys(node);
            for (let i = 0; i < names.length; i++) {
              bytes += names[i].length + 16;
              stack.push(node[names[i]]);
              if (bytes > cap) return bytes;
            }
          }
          if (bytes > cap) return bytes;
        }
        return bytes;
      }
    }
  };

  /**
   * Freezes every built-in reachable from the global object (constructors, prototypes, namespaces
   * such as JSON and Math, their functions and accessors) and makes the global bindings of the
   * built-ins read-only. The global object itself stays open: a directive's own globals are its
   * business. Writes to a frozen built-in throw a TypeError in a directive (directives are strict code).
   *
   * In two halves. `inSnapshot` runs once, when this file is evaluated into the thread's snapshot:
   * it freezes nearly everything there, so that every context made from the snapshot starts frozen.
   * Walking and freezing the ~700 built-ins in each context instead cost every API's isolate ~0.5
   * MiB that V8 kept committed after collecting the walk's garbage, and 1 ms of CPU (bench/RESULTS.md
   * § 13d). `inContext` runs in each context: it freezes what V8 changes when it makes a context from
   * a snapshot (`perContext`, and what V8 creates then), walking from roots that reach all of it and
   * descending only into what is not frozen; and it makes the globals read-only. Its soundness rests
   * on `perContext` naming every built-in V8 changes: the host checks it once per snapshot (install's
   * "check" mode, src/cell/sandbox-host/bootstrap-snapshot.ts) and, when something is left open, has every
   * context walked whole instead ("thorough").
   */
  function builtinLockdown() {
    const { defineProperty, freeze, getOwnPropertyDescriptor, getPrototypeOf, isFrozen } = Object;
    const { ownKeys } = Reflect;

    /**
     * The built-ins V8 changes in each context it makes from a snapshot (the language features it
     * installs then, `Error.stackTraceLimit`), left open in the snapshot and frozen in each context:
     * frozen in the snapshot, most abort the process when V8 makes a context, and RegExp.prototype
     * comes out with a property V8 added that a later freeze leaves configurable (found by freezing
     * each built-in alone in a snapshot, on Node 20's V8).
     */
    const perContext = () => [
      Error,
      Array.prototype,
      Array.prototype[Symbol.unscopables],
      getPrototypeOf(Uint8Array.prototype),
      ArrayBuffer.prototype,
      Intl.NumberFormat.prototype,
      Intl.PluralRules.prototype,
      RegExp.prototype,
    ];

    /** Global bindings install changes in each context (removed, or Proxy replaced): left open in the snapshot. */
    const perContextGlobals = new Set([
      'Proxy',
      'WebAssembly',
      'SharedArrayBuffer',
      'Atomics',
      'WeakRef',
      'FinalizationRegistry',
      '__anvilInstall',
    ]);

    /** Built-ins that no global property leads to. */
    const hidden = () => [
      getPrototypeOf(async function () {}),
      getPrototypeOf(function* () {}),
      getPrototypeOf(async function* () {}),
      getPrototypeOf([][Symbol.iterator]()),
      getPrototypeOf(new Map().entries()),
      getPrototypeOf(new Set().values()),
      getPrototypeOf(''[Symbol.iterator]()),
      getPrototypeOf(/a/[Symbol.matchAll]('')),
      getPrototypeOf(Uint8Array),
    ];

    // Ordinary code assigns these on its own objects (`this.name = 'MyError'` in an Error subclass,
    // `o.toString = …`); with the prototype frozen such an assignment would throw (the "override
    // mistake"). Each becomes an accessor whose setter gives the object its own property instead.
    const overridable = () => {
      const errors = [Error, EvalError, RangeError, ReferenceError, SyntaxError, TypeError, URIError, AggregateError];
      return [
        [
          Object.prototype,
          [
            'constructor',
            'hasOwnProperty',
            'isPrototypeOf',
            'propertyIsEnumerable',
            'toLocaleString',
            'toString',
            'valueOf',
          ],
        ],
        [Function.prototype, ['constructor', 'name', 'toString', 'bind', 'apply', 'call']],
        [Array.prototype, ['toString', 'push']],
        [Promise.prototype, ['constructor']],
        ...errors.map((E) => [E.prototype, ['constructor', 'name', 'message', 'toString']]),
      ];
    };

    function allowOverride(target, key) {
      const descriptor = getOwnPropertyDescriptor(target, key);
      if (descriptor === undefined || !('value' in descriptor)) return;
      const value = descriptor.value;
      defineProperty(target, key, {
        get() {
          return value;
        },
        set(next) {
          if (this === target)
            throw new TypeError(`Cannot assign to read only property '${String(key)}' of a built-in prototype`);
          defineProperty(this, key, { value: next, writable: true, enumerable: true, configurable: true });
        },
        enumerable: descriptor.enumerable,
        configurable: false,
      });
    }

    /** The global bindings' values (and accessors), each data binding made read-only but those named in `open`. */
    function globalValues(open) {
      const values = [];
      for (const key of ownKeys(globalThis)) {
        const descriptor = getOwnPropertyDescriptor(globalThis, key);
        if ('value' in descriptor) {
          values.push(descriptor.value);
          if ((descriptor.writable || descriptor.configurable) && !open.has(key))
            defineProperty(globalThis, key, { writable: false, configurable: false });
        } else {
          values.push(descriptor.get, descriptor.set);
        }
      }
      return values;
    }

    /**
     * Every object and function `roots` reach, each once, through prototypes and own properties,
     * the global object excepted; `visit(value)` says whether to go on through it (false: what it
     * reaches is not walked from here).
     */
    function walk(roots, visit) {
      const queue = roots;
      const seen = new Set();
      while (queue.length > 0) {
        const value = queue.pop();
        if (
          value === null ||
          (typeof value !== 'object' && typeof value !== 'function') ||
          value === globalThis ||
          seen.has(value)
        )
          continue;
        seen.add(value);
        if (!visit(value)) continue;
        queue.push(getPrototypeOf(value));
        for (const key of ownKeys(value)) {
          const descriptor = getOwnPropertyDescriptor(value, key);
          if ('value' in descriptor) queue.push(descriptor.value);
          else queue.push(descriptor.get, descriptor.set);
        }
      }
    }

    const none = new Set();
    return {
      inSnapshot() {
        const spared = new Set(perContext());
        for (const [target, keys] of overridable()) {
          if (!spared.has(target)) for (const key of keys) allowOverride(target, key);
        }
        walk([...hidden(), ...globalValues(perContextGlobals)], (value) => {
          if (!spared.has(value)) freeze(value);
          return true;
        });
      },
      /** `thorough`: every built-in walked, not only what is not frozen yet. */
      inContext(thorough) {
        // V8 calls Error.prepareStackTrace when it formats a stack: it stays settable (an accessor
        // of a frozen Error), and what a directive sets stays in its own context.
        let prepareStackTrace;
        defineProperty(Error, 'prepareStackTrace', {
          get: () => prepareStackTrace,
          set: (value) => {
            prepareStackTrace = value;
          },
          enumerable: false,
          configurable: false,
        });
        const roots = perContext();
        for (const [target, keys] of overridable()) {
          if (roots.includes(target)) for (const key of keys) allowOverride(target, key);
        }
        walk([...roots, ...hidden(), ...globalValues(none)], (value) => {
          if (isFrozen(value)) return thorough;
          freeze(value);
          return true;
        });
      },
      /** How many built-ins a whole walk finds open (none, once `inContext` has run). */
      openCount() {
        let open = 0;
        walk([...hidden(), ...globalValues(none)], (value) => {
          if (!isFrozen(value)) open++;
          return true;
        });
        return open;
      },
    };
  }
})();
