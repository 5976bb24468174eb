import pg from 'pg';
import type { InstanceLog } from '../../shared/logs/instance-log.js';
import { CHANGE_CHANNEL } from './pg-writes.js';

const RECONNECT_MS = 500;

/**
 * LISTENs for the control plane's change notices on a dedicated connection, and reconnects when it
 * breaks; `onChange` is also called after each (re)connection, for the notices missed meanwhile.
 */
export class ChangeListener {
  private client: pg.Client | null = null;
  private closed = false;
  private retry: NodeJS.Timeout | undefined;

  constructor(
    private readonly url: string,
    private readonly log: InstanceLog,
    private readonly onChange: () => void,
  ) {}

  /** The first connection; its failure fails the start. */
  async start(): Promise<void> {
    await this.connect();
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = null;
    await client?.end().catch(() => undefined);
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({
      connectionString: this.url,
      application_name: 'anvil-listen',
      connectionTimeoutMillis: 5_000,
    });
    let lost = false;
    const onLost = (error?: Error): void => {
      if (lost) return;
      lost = true;
      if (this.client === client) this.client = null;
      void client.end().catch(() => undefined);
      if (this.closed) return;
      this.log.warn(
        { err: error },
        'control plane: the LISTEN connection was lost; reconnecting (the version poll covers the gap)',
      );
      this.scheduleReconnect();
    };
    client.on('error', onLost);
    client.on('end', () => onLost());
    client.on('notification', () => this.onChange());
    await client.connect();
    await client.query(`LISTEN ${CHANGE_CHANNEL}`);
    if (this.closed) {
      await client.end().catch(() => undefined);
      return;
    }
    this.client = client;
    this.onChange();
  }

  private scheduleReconnect(): void {
    clearTimeout(this.retry);
    this.retry = setTimeout(() => {
      this.connect().catch(() => {
        if (!this.closed) this.scheduleReconnect();
      });
    }, RECONNECT_MS);
    this.retry.unref();
  }
}
