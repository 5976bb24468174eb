import { InvalidArgumentError } from 'commander';
import { parseTrustedProxies } from '../front/edge/client-address.js';

/** Option parsers that refuse bad values with a message naming the option (piscina-style: validate up front). */
export function integer(name: string, min: number, max: number): (value: string) => number {
  return (value) => {
    const n = Number(value);
    if (!Number.isInteger(n) || n < min || n > max) throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}, got "${value}"`);
    return n;
  };
}

const SIZE = /^(\d+)\s*(b|kb|kib|mb|mib|gb|gib)?$/i;
const UNITS: Record<string, number> = { b: 1, kb: 1000, kib: 1024, mb: 1e6, mib: 1024 ** 2, gb: 1e9, gib: 1024 ** 3 };

/** `1048576`, `1MiB`, `512kb`… */
export function byteSize(name: string): (value: string) => number {
  return (value) => {
    const match = SIZE.exec(value.trim());
    if (match === null) throw new InvalidArgumentError(`${name} must be a size such as 1048576, 512KiB or 1MiB, got "${value}"`);
    const bytes = Number(match[1]) * UNITS[(match[2] ?? 'b').toLowerCase()]!;
    if (bytes < 1) throw new InvalidArgumentError(`${name} must be at least 1 byte`);
    return bytes;
  };
}

/** A size as byteSize reads it, or 0 (none). */
export function byteSizeOrZero(name: string): (value: string) => number {
  const size = byteSize(name);
  return (value) => (value.trim() === '0' ? 0 : size(value));
}

/** `30s`, `500ms`, `2m`, or a number of milliseconds. */
export function duration(name: string, minMs = 1): (value: string) => number {
  return (value) => {
    const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m)?$/.exec(value.trim());
    if (match === null) throw new InvalidArgumentError(`${name} must be a duration such as 500ms, 30s or 2m, got "${value}"`);
    const ms = Number(match[1]) * (match[2] === 's' ? 1000 : match[2] === 'm' ? 60_000 : 1);
    if (ms < minMs) throw new InvalidArgumentError(`${name} must be at least ${minMs}ms`);
    return Math.round(ms);
  };
}

export function envName(value: string): string {
  if (!/^[a-z0-9][a-z0-9_-]{0,31}$/.test(value)) throw new InvalidArgumentError(`--env must be lower-case letters, digits, _ or - (e.g. dev, pro), got "${value}"`);
  return value;
}

/** `--trusted-proxy`: checked here so a typo stops the start with the flag's name. */
export function trustedProxies(value: string): string {
  try {
    parseTrustedProxies(value);
  } catch (error) {
    throw new InvalidArgumentError((error as Error).message);
  }
  return value;
}
