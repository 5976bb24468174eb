/**
 * What one request holds beyond a directive's call and must let go of whatever happens next (a
 * database transaction). A directive holds it under a name and usually ends it itself (a commit);
 * otherwise the engine releases everything still held when a directive throws (before ERROR_FLOW
 * runs) and when each pass ends. The engine knows nothing of what is held.
 */

/** Why a held thing is let go of by the engine: a directive threw, or the pass ended with it still held. */
export type ReleaseReason = 'error' | 'end';

export interface HeldResource {
  /** Lets go (a rollback, say). Must not throw for a thing already gone; a throw is reported, not re-raised. */
  release(reason: ReleaseReason): void;
}

const NOTHING: ReadonlyArray<{ name: string; error: unknown }> = Object.freeze([]);

export class HeldResources {
  /** Made when something is first held: most requests hold nothing. */
  private items: Map<string, HeldResource> | null = null;

  get<T extends HeldResource>(name: string): T | undefined {
    return this.items?.get(name) as T | undefined;
  }

  hold(name: string, resource: HeldResource): void {
    (this.items ??= new Map()).set(name, resource);
  }

  /** Forgets a thing its directive ended itself (committed): the engine will not release it. */
  forget(name: string): void {
    this.items?.delete(name);
  }

  /** Releases everything held, in the order it was taken; returns the failures (each thing is released whatever the others did). */
  releaseAll(reason: ReleaseReason): ReadonlyArray<{ name: string; error: unknown }> {
    if (this.items === null || this.items.size === 0) return NOTHING;
    const failures: Array<{ name: string; error: unknown }> = [];
    const held = [...this.items];
    this.items.clear();
    for (const [name, resource] of held) {
      try {
        resource.release(reason);
      } catch (error) {
        failures.push({ name, error });
      }
    }
    return failures;
  }
}
