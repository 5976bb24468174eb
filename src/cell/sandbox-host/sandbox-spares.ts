/**
 * A shared thread's spare sandbox context: an isolate with its context and the bootstrap installed
 * (~4–6 ms, most of an API's cold start), made before an API needs it, so that an API's first call
 * on the thread finds one ready. It is made like the last one asked for (the same memory limit),
 * on isolated-vm's own threads but for the isolate itself, and given to one sandbox only; the first
 * is made once a sandbox asks (or when told what to expect), the next once it is taken. No tenant code has run in a spare: what
 * it holds is the bootstrap's.
 */
import { ContextParts, type ContextShape } from './sandbox-context.js';

export class SandboxSpares {
  private ready: ContextParts | null = null;
  /** Settles once the spare in the making is ready (or failed); null when none is being made. */
  private making: Promise<void> | null = null;
  private shape: ContextShape | null = null;
  private closed = false;

  /** A context made like `shape`, or null when none is ready (another is made then, for next time). */
  take(shape: ContextShape): ContextParts | null {
    this.shape = shape;
    let spare = this.ready;
    this.ready = null;
    if (spare !== null && !sameShape(spare.shape, shape)) {
      // Made for another limit: the next spare is made like this one.
      spare.dispose();
      spare = null;
    }
    this.refill();
    return spare;
  }

  /** The first spare is made like `shape` now, before any sandbox asks (a thread that expects APIs). */
  expect(shape: ContextShape): void {
    if (this.shape !== null) return;
    this.shape = shape;
    this.refill();
  }

  /**
   * When a spare like `shape` is being made: a promise that settles once it is ready, within
   * `waitMs` at most. Waiting for it costs a first call less than making another beside it, on the
   * same cores.
   */
  comingFor(shape: ContextShape, waitMs: number): Promise<void> | null {
    if (this.making === null || this.ready !== null || this.shape === null || !sameShape(this.shape, shape))
      return null;
    return Promise.race([this.making, new Promise<void>((resolve) => setTimeout(resolve, waitMs).unref())]);
  }

  close(): void {
    this.closed = true;
    this.ready?.dispose();
    this.ready = null;
  }

  /**
   * Warms the ready spare, until it is warm or taken. Without it, a hundred APIs' isolates taking
   * the same traffic had V8 optimize the bootstrap's hot path in all of them at about the same
   * call, on their shared thread, which stalled every API on it (bench/RESULTS.md § 13d).
   */
  private async warm(parts: ContextParts): Promise<void> {
    for (let done = 0; done < WARM_CALLS && this.ready === parts; done += WARM_STEP) {
      try {
        await parts.warm(WARM_STEP);
      } catch {
        return; // disposed meanwhile
      }
    }
  }

  private refill(): void {
    if (this.making !== null || this.ready !== null || this.closed || this.shape === null) return;
    const shape = this.shape;
    this.making = new Promise<void>((resolve) => {
      // A timer, not setImmediate: the answers of this turn (written at its end, frames.ts) leave first.
      setTimeout(() => {
        ContextParts.prepare(shape)
          .then(
            (parts) => {
              if (this.closed) return parts.dispose();
              this.ready = parts;
              void this.warm(parts);
            },
            // Not made (the process is short of memory, say): the next sandbox makes its own.
            () => {},
          )
          .finally(() => {
            this.making = null;
            resolve();
          });
      }, 1).unref();
    });
  }
}

/**
 * How often a spare runs what every call runs before it is warm: past where V8 optimizes it (900–1 200
 * here), ~9 ms of CPU on isolated-vm's threads; in steps, so that a first call that takes a spare
 * while it warms waits for one step at most (~0.6 ms).
 */
const WARM_CALLS = 1500;
const WARM_STEP = 100;

const sameShape = (a: ContextShape, b: ContextShape): boolean =>
  a.memoryMb === b.memoryMb && a.valueMaxBytes === b.valueMaxBytes && a.snapshot === b.snapshot;
