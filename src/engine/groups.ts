/**
 * The group table of SPEC §4 in one place. Group names are case-insensitive; they are stored
 * lower-cased. NORMAL_FLOW starts enabled; ERROR_FLOW and QUEUE_FLOW, when enabled, disable every
 * other group; AFTER_FLOW is only ever enabled by the engine for the second pass.
 */
export const NORMAL_FLOW = 'normal_flow';
export const ERROR_FLOW = 'error_flow';
export const QUEUE_FLOW = 'queue_flow';
export const AFTER_FLOW = 'after_flow';

/** Groups that, once enabled, switch every other group off. */
const EXCLUSIVE = new Set([ERROR_FLOW, QUEUE_FLOW]);

export function normalizeGroup(name: string): string {
  return name.toLowerCase();
}

export class Groups {
  private enabled: Set<string>;

  constructor(initial: readonly string[] = [NORMAL_FLOW]) {
    this.enabled = new Set(initial);
  }

  enable(name: string): void {
    const group = normalizeGroup(name);
    if (EXCLUSIVE.has(group)) this.enabled.clear();
    this.enabled.add(group);
  }

  disable(name: string): void {
    this.enabled.delete(normalizeGroup(name));
  }

  disableAll(): void {
    this.enabled.clear();
  }

  isEnabled(name: string): boolean {
    return this.enabled.has(normalizeGroup(name));
  }

  /** True when any of the (already lower-cased) groups is enabled. */
  anyEnabled(groups: readonly string[]): boolean {
    for (const g of groups) if (this.enabled.has(g)) return true;
    return false;
  }

  list(): string[] {
    return [...this.enabled];
  }

  /** Replaces the whole set; used by the engine to start the AFTER_FLOW pass. */
  reset(only: readonly string[]): void {
    this.enabled.clear();
    for (const group of only) this.enabled.add(group);
  }
}
