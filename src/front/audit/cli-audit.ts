import { userInfo } from 'node:os';
import { resolve } from 'node:path';
import { DataPaths } from '../../deploy/api-yaml/data-paths.js';
import type { AuditAction } from './audit-entry.js';
import { SqliteAuditStore } from './sqlite-audit-store.js';

export interface CliAction {
  action: AuditAction;
  host: string | null;
  api?: string | null;
  detail?: Record<string, unknown>;
}

/**
 * Runs an `anvil` command's change to a data directory and records it in that directory's audit
 * log (a running instance logs it within a second): ok, or failed with the command's message
 * (rethrown). The caller is the local user; there is no address and no key.
 */
export async function auditedCliAction<T>(
  dataDir: string,
  action: CliAction,
  work: () => T | Promise<T>,
  describe: (result: T) => Record<string, unknown> = () => ({}),
): Promise<T> {
  try {
    const result = await work();
    await record(dataDir, action, null, describe(result));
    return result;
  } catch (error) {
    await record(dataDir, action, error instanceof Error ? error.message : String(error), {});
    throw error;
  }
}

async function record(
  dataDir: string,
  action: CliAction,
  error: string | null,
  more: Record<string, unknown>,
): Promise<void> {
  let store: SqliteAuditStore | null = null;
  try {
    store = SqliteAuditStore.open(new DataPaths(resolve(dataDir)).auditFile);
    await store.append({
      timeMs: Date.now(),
      action: action.action,
      host: action.host,
      api: action.api ?? null,
      release: null,
      result: error === null ? 'ok' : 'error',
      status: null,
      error,
      address: null,
      keyFingerprint: null,
      origin: 'cli',
      detail: { user: currentUser(), ...action.detail, ...more },
    });
  } catch (failure) {
    // The command did what it was asked; only its audit entry is missing, and it says so.
    process.stderr.write(
      `warning: the audit log of ${dataDir} could not record this command: ${(failure as Error).message}\n`,
    );
  } finally {
    store?.close();
  }
}

function currentUser(): string {
  try {
    return userInfo().username;
  } catch {
    return String(process.getuid?.() ?? 'unknown');
  }
}
