import type { ApiId } from '../../shared/protocol/api-id.js';
import type { FaultPolicy } from './fault-policy.js';
import type { HostFaults, HostId } from './host-faults.js';

/** What quarantine needs of the cells. */
export interface QuarantineControl {
  addCell(): number;
  /** Stops a cell for good (its index may be reused). */
  retireCell(cell: number): void;
}

/**
 * The cells of quarantined APIs (fault-policy.ts decides who is quarantined) and of suspect or moved
 * hosts (host-faults.ts: one cell per host, for its APIs not quarantined alone): started when a
 * culprit needs one, bounded by `maxCells`, stopped when no API placed in them needs them.
 */
export class QuarantineCells {
  constructor(
    private readonly faults: FaultPolicy,
    private readonly hosts: HostFaults,
    private readonly control: () => QuarantineControl,
    private readonly baseCells: number,
    /** Every cell at most: the base cells, one place kept for the low-priority cell, and quarantine cells. */
    private readonly maxCells: number,
    private readonly log: (level: 'info', msg: string, fields: Record<string, unknown>) => void,
  ) {}

  /** The cell of a quarantined API, started now when it has none; undefined when it is not quarantined. */
  cellOf(api: ApiId, now: number): number | undefined {
    const placement = this.faults.placement(api);
    if (placement === undefined) return undefined;
    if (placement.cell === null) this.faults.place(api, this.newCell(), now);
    return placement.cell!;
  }

  /** The quarantine cell of a host, started now when it has none. */
  cellOfHost(host: HostId): number {
    const placement = this.hosts.placement(host)!;
    if (placement.cell === null) this.hosts.place(host, this.newCell());
    return placement.cell!;
  }

  /** The host keeps its record but not its cell; the cell stops once no API is placed in it. */
  releaseHost(host: HostId): void {
    const cell = this.hosts.placement(host)?.cell;
    if (cell === undefined || cell === null) return;
    this.hosts.place(host, null);
    this.retireIfUnused(cell);
  }

  /** Places a culprit in a quarantine cell; returns the cell. */
  place(api: ApiId, now: number): number {
    const cell = this.newCell();
    this.faults.place(api, cell, now);
    return cell;
  }

  /** The API keeps its quarantine record but not its cell; the cell stops once no API is placed in it. */
  release(api: ApiId): void {
    const cell = this.faults.placement(api)?.cell;
    if (cell === undefined || cell === null) return;
    this.faults.place(api, null, Date.now());
    this.retireIfUnused(cell);
  }

  private retireIfUnused(cell: number): void {
    for (const placement of this.faults.quarantined()) if (placement.cell === cell) return;
    for (const placement of this.hosts.all()) if (placement.cell === cell) return;
    this.control().retireCell(cell);
    this.log('info', 'quarantine cell stopped: no API needs it', { cell });
  }

  /** Releases the cells of quarantined APIs that had no request for `idleMs` (or were disabled, deleted) and are not `active`. */
  reap(now: number, idleMs: number, active: (api: ApiId) => boolean, hostActive: (host: HostId) => boolean): void {
    for (const placement of this.faults.quarantined()) {
      if (placement.cell !== null && now - placement.lastUsed >= idleMs && !active(placement.api))
        this.release(placement.api);
    }
    for (const placement of this.hosts.all()) {
      if (placement.cell !== null && now - placement.lastUsed >= idleMs && !hostActive(placement))
        this.releaseHost(placement);
    }
  }

  /**
   * A cell for one more quarantined API: a new one while there is room under `maxCells`, else the
   * quarantine cell with the fewest APIs: quarantined APIs may end up sharing a cell, never with
   * the APIs that did nothing wrong.
   */
  private newCell(): number {
    const apis = new Map<number, number>();
    for (const placement of this.faults.quarantined())
      if (placement.cell !== null) apis.set(placement.cell, (apis.get(placement.cell) ?? 0) + 1);
    for (const placement of this.hosts.all())
      if (placement.cell !== null) apis.set(placement.cell, (apis.get(placement.cell) ?? 0) + 1);
    const room = this.maxCells - this.baseCells - 1 - apis.size;
    if (room > 0 || apis.size === 0) return this.control().addCell();
    return [...apis].sort((a, b) => a[1] - b[1])[0]![0];
  }
}
