import { randomBytes } from 'node:crypto';
import type pg from 'pg';
import { SCHEMA } from '../../deploy/control-plane/pg-schema.js';

/** A placed API's row: who owns it, under which epoch, and how long its lease has left (Postgres's clock). */
export interface PlacementRow {
  host: string;
  key: string;
  owner: string;
  epoch: number;
  leftMs: number;
}

export interface InstanceRow {
  id: string;
  internalUrl: string;
  /** Time since its last heartbeat, on Postgres's clock. */
  ageMs: number;
}

/**
 * The placement tables of the control plane (pg-schema.ts, migration 2). Every lease time is
 * Postgres's `clock_timestamp()`: instances never compare their own clocks with each other.
 */
export class PgPlacementStore {
  constructor(private readonly pool: pg.Pool) {}

  /** The cluster's internal secret: the first instance to ask creates it. */
  async clusterSecret(): Promise<string> {
    await this.pool.query(`INSERT INTO ${SCHEMA}.cluster (id, secret) VALUES (1, $1) ON CONFLICT (id) DO NOTHING`, [
      randomBytes(32).toString('base64url'),
    ]);
    const { rows } = await this.pool.query<{ secret: string }>(`SELECT secret FROM ${SCHEMA}.cluster WHERE id = 1`);
    return rows[0]!.secret;
  }

  async heartbeat(id: string, internalUrl: string): Promise<void> {
    await this.pool.query(
      `INSERT INTO ${SCHEMA}.instances (id, internal_url, heartbeat_at) VALUES ($1, $2, clock_timestamp())
       ON CONFLICT (id) DO UPDATE SET heartbeat_at = clock_timestamp(), internal_url = EXCLUDED.internal_url`,
      [id, internalUrl],
    );
  }

  async instances(): Promise<InstanceRow[]> {
    const { rows } = await this.pool.query<{ id: string; internal_url: string; age_ms: number }>(
      `SELECT id, internal_url, (extract(epoch FROM clock_timestamp() - heartbeat_at) * 1000)::float8 AS age_ms FROM ${SCHEMA}.instances`,
    );
    return rows.map((r) => ({ id: r.id, internalUrl: r.internal_url, ageMs: r.age_ms }));
  }

  /** Extends every lease `owner` still holds; the ones it lost (lapsed, taken) are not among those returned. */
  async renew(owner: string, leaseMs: number): Promise<PlacementRow[]> {
    const { rows } = await this.pool.query<RawRow>(
      `UPDATE ${SCHEMA}.placements SET lease_until = clock_timestamp() + $2::float8 * interval '1 millisecond'
       WHERE owner = $1 AND lease_until > clock_timestamp()
       RETURNING host, key, owner, epoch::float8 AS epoch, $2::float8 AS left_ms`,
      [owner, leaseMs],
    );
    return rows.map(toRow);
  }

  async placements(): Promise<PlacementRow[]> {
    const { rows } = await this.pool.query<RawRow>(
      `SELECT host, key, owner, epoch::float8 AS epoch, (extract(epoch FROM lease_until - clock_timestamp()) * 1000)::float8 AS left_ms FROM ${SCHEMA}.placements`,
    );
    return rows.map(toRow);
  }

  /**
   * Takes an API whose lease has lapsed (or that has none) for `owner`, with the next epoch. Null
   * when another instance holds a valid lease: a new owner never starts while the old lease runs.
   */
  async claim(host: string, key: string, owner: string, leaseMs: number): Promise<number | null> {
    const { rows } = await this.pool.query<{ epoch: number }>(
      `INSERT INTO ${SCHEMA}.placements AS p (host, key, owner, epoch, lease_until) VALUES ($1, $2, $3, 1, clock_timestamp() + $4::float8 * interval '1 millisecond')
       ON CONFLICT (host, key) DO UPDATE SET owner = EXCLUDED.owner, epoch = p.epoch + 1, lease_until = EXCLUDED.lease_until
       WHERE p.lease_until <= clock_timestamp()
       RETURNING epoch::float8 AS epoch`,
      [host, key, owner, leaseMs],
    );
    return rows[0]?.epoch ?? null;
  }

  /** A drained instance gives its leases back and leaves: the others take its APIs at once. */
  async leave(id: string): Promise<void> {
    await this.pool.query(
      `UPDATE ${SCHEMA}.placements SET lease_until = clock_timestamp() WHERE owner = $1 AND lease_until > clock_timestamp()`,
      [id],
    );
    await this.pool.query(
      `DELETE FROM ${SCHEMA}.instances WHERE id = $1 OR heartbeat_at < clock_timestamp() - interval '1 day'`,
      [id],
    );
  }
}

interface RawRow {
  host: string;
  key: string;
  owner: string;
  epoch: number;
  left_ms: number;
}

function toRow(r: RawRow): PlacementRow {
  return { host: r.host, key: r.key, owner: r.owner, epoch: r.epoch, leftMs: r.left_ms };
}
