import type { InstanceLog } from '../../shared/logs/instance-log.js';
import type { AuditEntry, AuditRecord } from './audit-entry.js';
import type { AuditPage, AuditQuery, AuditRetention, AuditStore } from './audit-store.js';

const PRUNE_EVERY_MS = 60 * 60 * 1000;
/** How often entries written by `anvil` commands are looked for, to log them too. */
const CLI_POLL_MS = 1_000;

/**
 * The instance's audit log: every management action goes to the store and, as a pino line, to the
 * instance log. Entries `anvil` commands wrote to the store (hosts, jobs) are logged when seen.
 * Recording never fails the action: a store that cannot write is a warning (the pino line is
 * still written).
 */
export class AuditLog {
  private readonly timers: NodeJS.Timeout[] = [];
  private lastCliId = 0;
  private polling = false;

  private constructor(
    private readonly store: AuditStore,
    private readonly log: InstanceLog,
    private readonly retention: AuditRetention,
    private readonly now: () => number,
  ) {}

  static async open(
    store: AuditStore,
    log: InstanceLog,
    retention: AuditRetention,
    now: () => number = Date.now,
  ): Promise<AuditLog> {
    const audit = new AuditLog(store, log, retention, now);
    audit.lastCliId = await store.lastId();
    await audit.prune();
    audit.timers.push(
      setInterval(() => void audit.prune(), PRUNE_EVERY_MS),
      setInterval(() => void audit.logCliEntries(), CLI_POLL_MS),
    );
    for (const timer of audit.timers) timer.unref();
    return audit;
  }

  async record(record: Omit<AuditRecord, 'timeMs' | 'origin'>): Promise<void> {
    const full: AuditRecord = { ...record, timeMs: this.now(), origin: 'http' };
    let id: number | null = null;
    try {
      id = await this.store.append(full);
      await this.store.trim(full.host, this.retention.rows);
    } catch (error) {
      this.log.warn(
        { err: error, action: record.action, host: record.host, api: record.api },
        'audit entry not stored',
      );
    }
    const { timeMs, ...fields } = full;
    this.logEntry({ ...fields, id: id ?? 0, time: new Date(timeMs).toISOString() });
  }

  list(query: AuditQuery): Promise<AuditPage> {
    return this.store.list(query);
  }

  close(): void {
    for (const timer of this.timers) clearInterval(timer);
    this.store.close();
  }

  private logEntry(entry: AuditEntry): void {
    const { detail, ...audit } = entry;
    const line = { audit: detail === null ? audit : { ...audit, detail } };
    const text = `audit: ${entry.action} ${entry.result === 'ok' ? 'ok' : `failed (${entry.status ?? '-'})`}`;
    if (entry.result === 'ok') this.log.info(line, text);
    else this.log.warn(line, text);
  }

  private async prune(): Promise<void> {
    try {
      const removed = await this.store.prune(this.retention, this.now());
      if (removed > 0) this.log.info({ removed, retention: this.retention }, 'audit entries removed by retention');
    } catch (error) {
      this.log.warn({ err: error }, 'audit retention failed');
    }
  }

  private async logCliEntries(): Promise<void> {
    if (this.polling) return;
    this.polling = true;
    try {
      for (const entry of await this.store.since(this.lastCliId, 'cli', 1000)) {
        this.logEntry(entry);
        this.lastCliId = entry.id;
      }
    } catch {
      // The next poll tries again.
    } finally {
      this.polling = false;
    }
  }
}
