import type { ThreadLink } from './thread-link.js';

/** A thread's CPU report older than this is stale (it stopped reporting: it is idle). */
const STATS_FRESH_MS = 3_000;

/** What an actor's threads reported of their CPU lately: cores kept busy, CPU ms and requests. */
export function recentCpu(
  links: readonly ThreadLink[],
  now: number,
  freshMs = STATS_FRESH_MS,
): { cores: number; cpuMs: number; requests: number } {
  let cores = 0;
  let cpuMs = 0;
  let requests = 0;
  for (const link of links) {
    if (now - link.statsAt >= freshMs) continue;
    cores += link.stats.cpuMs / Math.max(1, link.stats.windowMs);
    cpuMs += link.stats.cpuMs;
    requests += link.stats.requests;
  }
  return { cores, cpuMs, requests };
}
