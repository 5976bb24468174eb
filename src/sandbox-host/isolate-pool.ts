import ivm from 'isolated-vm';

/** One isolate and the scripts compiled in it (compiling once per isolate, running per call). */
export interface IsolateSlot {
  readonly isolate: ivm.Isolate;
  readonly scripts: Map<string, ivm.Script>;
  /**
   * The fresh context the next call will use, made while the isolate was idle, on isolated-vm's
   * own thread (null when it could not be made: the call makes one itself).
   */
  nextContext: Promise<ivm.Context | null> | null;
}

export interface PoolOptions {
  memoryMb: number;
  /** Isolates at most; a call beyond waits for one to be free. */
  size: number;
  bootstrapSource: string;
  onCatastrophicError(message: string): void;
}

/**
 * The isolates of one actor thread. A call takes a free isolate for itself (so a limit breach can
 * dispose that isolate without touching another call), and gives it back when done; a broken
 * isolate is disposed and a new one is made on demand. Isolates are made lazily: an API whose
 * custom directives never run holds none.
 */
export class IsolatePool {
  private readonly free: IsolateSlot[] = [];
  private live = 0;
  private readonly waiting: Array<(slot: IsolateSlot) => void> = [];
  private closed = false;
  /**
   * The bootstrap, run once into a snapshot every isolate of the pool starts from: each fresh
   * context then already holds it. Running the bootstrap script into each context instead leaks —
   * measured here, V8 never frees those contexts and a 64 MiB isolate dies after a few hundred calls.
   */
  private snapshot: ivm.ExternalCopy<ArrayBuffer> | null = null;

  constructor(private readonly options: PoolOptions) {}

  /** A fresh context for a call in `slot`: the one made ahead when there is one. */
  takeContext(slot: IsolateSlot): Promise<ivm.Context | null> {
    const next = slot.nextContext;
    slot.nextContext = null;
    return next ?? Promise.resolve(null);
  }

  async acquire(): Promise<IsolateSlot> {
    if (this.closed) throw new Error('the sandbox is closed');
    const slot = this.free.pop();
    if (slot !== undefined) return slot;
    if (this.live < this.options.size) {
      this.live++;
      try {
        return await this.create();
      } catch (error) {
        this.live--;
        throw error;
      }
    }
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  /**
   * Gives a slot back; `broken` (a breach, a disposed isolate) throws it away instead, and so does
   * an isolate whose heap is over half its limit: V8 keeps part of every finished context (more for
   * larger directive scripts), and a heap near its limit spends its time in GC and then fails a
   * call that did nothing wrong. Recycling costs a new isolate (a few ms) every few hundred calls.
   */
  release(slot: IsolateSlot, broken: boolean): void {
    if (broken || slot.isolate.isDisposed || this.closed || this.tooFull(slot)) {
      if (!slot.isolate.isDisposed) slot.isolate.dispose();
      this.live--;
      const next = this.waiting.shift();
      if (next !== undefined && !this.closed) {
        this.live++;
        this.create().then(next, () => this.live--);
      }
      return;
    }
    prepareContext(slot);
    const next = this.waiting.shift();
    if (next !== undefined) next(slot);
    else this.free.push(slot);
  }

  async script(slot: IsolateSlot, name: string, code: string): Promise<ivm.Script> {
    let script = slot.scripts.get(name);
    if (script === undefined) {
      script = await slot.isolate.compileScript(code, { filename: `file:///Directives/${name}.js` });
      slot.scripts.set(name, script);
    }
    return script;
  }

  get isolates(): number {
    return this.live;
  }

  private tooFull(slot: IsolateSlot): boolean {
    const heap = slot.isolate.getHeapStatisticsSync();
    return heap.used_heap_size + heap.externally_allocated_size > (this.options.memoryMb * 1024 * 1024) / 2;
  }

  /** Bytes used on the heaps of the idle isolates (a busy one is counted when it is back). */
  async heapBytes(): Promise<number> {
    const sizes = await Promise.all(this.free.map((slot) => (slot.isolate.isDisposed ? 0 : slot.isolate.getHeapStatistics().then((s) => s.used_heap_size + s.externally_allocated_size, () => 0))));
    return sizes.reduce((sum, size) => sum + size, 0);
  }

  close(): void {
    this.closed = true;
    for (const slot of this.free.splice(0)) if (!slot.isolate.isDisposed) slot.isolate.dispose();
  }

  private async create(): Promise<IsolateSlot> {
    this.snapshot ??= ivm.Isolate.createSnapshot([{ code: this.options.bootstrapSource, filename: 'file:///anvil/bootstrap.js' }]);
    const isolate = new ivm.Isolate({ memoryLimit: this.options.memoryMb, onCatastrophicError: this.options.onCatastrophicError, snapshot: this.snapshot });
    const slot: IsolateSlot = { isolate, scripts: new Map(), nextContext: null };
    prepareContext(slot);
    return slot;
  }
}

/**
 * Starts making the context of the slot's next call. Making a context is most of what a call to a
 * trivial directive costs (~0.5 ms of deserializing V8's built-ins); made ahead on isolated-vm's
 * thread, the call only takes it. Every call still gets a context no code has run in.
 */
function prepareContext(slot: IsolateSlot): void {
  if (slot.nextContext !== null || slot.isolate.isDisposed) return;
  slot.nextContext = slot.isolate.createContext().catch(() => null);
}
