import { readFileSync } from 'node:fs';
import type { CompiledRelease } from '../../shared/api-model/types.js';
import type { ApiEntry } from '../scheduling/api-directory.js';

/**
 * Which releases are placed on one owner instance in cluster mode: those that keep data on the
 * instance's disk (compiled.json `localState`, deploy/releases/local-state.ts). Read once per release,
 * which never changes; a release whose files have not arrived yet is asked again later.
 */
export class PlacedReleases {
  private readonly known = new Map<string, boolean>();

  isPlaced(api: ApiEntry): boolean {
    const cached = this.known.get(api.spec.id);
    if (cached !== undefined) return cached;
    let compiled: Pick<CompiledRelease, 'localState' | 'definition'>;
    try {
      compiled = JSON.parse(readFileSync(api.spec.compiledFile, 'utf8')) as CompiledRelease;
    } catch {
      return false;
    }
    // Releases staged before the flag existed: placed unless their data is in Postgres.
    const placed = compiled.localState ?? compiled.definition.database !== 'postgres';
    this.known.set(api.spec.id, placed);
    return placed;
  }
}

/** The identity placement works with: host and key (a host has one env). */
export function placementId(host: string, key: string): string {
  return `${host}/${key}`;
}
