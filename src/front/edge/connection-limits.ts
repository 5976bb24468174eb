import { readFileSync } from 'node:fs';

/** How many client connections the router keeps open (--max-connections, --max-connections-per-client). */
export interface ConnectionLimits {
  /** All client connections of the listener together. */
  total: number;
  /** Connections from one client address (the PROXY header's with --proxy-protocol); trusted proxies are exempt. */
  perClient: number;
}

/** The default total never goes above this, however many descriptors the process may open. */
export const MAX_DEFAULT_CONNECTIONS = 50_000;
/** The default per client never goes above this. */
export const MAX_DEFAULT_CONNECTIONS_PER_CLIENT = 256;

/**
 * The limits, from the flags where given, else from the process's open-files limit: a quarter of it
 * (at least 256 descriptors) is left for what the router opens itself (databases, log and release
 * files, the cells' sockets), the rest goes to client connections, up to MAX_DEFAULT_CONNECTIONS;
 * one client may hold a quarter of the total, up to MAX_DEFAULT_CONNECTIONS_PER_CLIENT.
 */
export function connectionLimits(
  total: number | undefined,
  perClient: number | undefined,
  openFiles: number | null,
): ConnectionLimits {
  const files = openFiles ?? 1024;
  const chosenTotal =
    total ?? Math.max(64, Math.min(MAX_DEFAULT_CONNECTIONS, files - Math.max(256, Math.floor(files / 4))));
  return {
    total: chosenTotal,
    perClient: perClient ?? Math.max(1, Math.min(MAX_DEFAULT_CONNECTIONS_PER_CLIENT, Math.floor(chosenTotal / 4))),
  };
}

/** The soft RLIMIT_NOFILE (node raises it to the hard limit at start) from /proc/self/limits; null where there is none. */
export function readOpenFilesLimit(): number | null {
  try {
    const line = readFileSync('/proc/self/limits', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('Max open files'));
    const text = line?.slice('Max open files'.length).trim().split(/\s+/)[0];
    const soft = text === 'unlimited' ? Number.MAX_SAFE_INTEGER : Number(text);
    return Number.isFinite(soft) && soft > 0 ? soft : null;
  } catch {
    return null;
  }
}
