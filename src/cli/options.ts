import { InvalidArgumentError } from 'commander';
import { parseTrustedProxies } from '../front/edge/client-address.js';

/**
 * How an option's text becomes its value: `read` refuses a bad value with a message naming the
 * option (`name`: its flag, or its variable when it has none), piscina-style: validate up front;
 * `show` writes a value back as the option takes it, for --help and the docs.
 */
export interface Parser<T> {
  read(text: string, name: string): T;
  show(value: T): string;
}

/** `parser` as commander takes it, for an option named `name`. */
export function argument<T>(name: string, parser: Parser<T>): (text: string) => T {
  return (text) => parser.read(text, name);
}

export function integer(min: number, max: number): Parser<number> {
  return {
    read(value, name) {
      const n = Number(value);
      if (!Number.isInteger(n) || n < min || n > max)
        throw new InvalidArgumentError(`${name} must be an integer from ${min} to ${max}, got "${value}"`);
      return n;
    },
    show: String,
  };
}

const SIZE = /^(\d+)\s*(b|kb|kib|mb|mib|gb|gib)?$/i;
const UNITS: Record<string, number> = { b: 1, kb: 1000, kib: 1024, mb: 1e6, mib: 1024 ** 2, gb: 1e9, gib: 1024 ** 3 };

/** `1048576`, `1MiB`, `512kb`… */
export const byteSize: Parser<number> = {
  read(value, name) {
    const match = SIZE.exec(value.trim());
    if (match === null)
      throw new InvalidArgumentError(`${name} must be a size such as 1048576, 512KiB or 1MiB, got "${value}"`);
    const bytes = Number(match[1]) * UNITS[(match[2] ?? 'b').toLowerCase()]!;
    if (bytes < 1) throw new InvalidArgumentError(`${name} must be at least 1 byte`);
    return bytes;
  },
  show(bytes) {
    const unit = ['GiB', 'MiB', 'KiB'].find((u) => bytes % UNITS[u.toLowerCase()]! === 0);
    return unit === undefined ? String(bytes) : `${bytes / UNITS[unit.toLowerCase()]!}${unit}`;
  },
};

/** A size as byteSize reads it, or 0 (none). */
export const byteSizeOrZero: Parser<number> = {
  read: (value, name) => (value.trim() === '0' ? 0 : byteSize.read(value, name)),
  show: (bytes) => (bytes === 0 ? '0' : byteSize.show(bytes)),
};

/** `30s`, `500ms`, `2m`, or a number of milliseconds; at least `minMs`. */
export function duration(minMs = 1): Parser<number> {
  return {
    read(value, name) {
      const match = /^(\d+(?:\.\d+)?)\s*(ms|s|m)?$/.exec(value.trim());
      if (match === null)
        throw new InvalidArgumentError(`${name} must be a duration such as 500ms, 30s or 2m, got "${value}"`);
      const ms = Number(match[1]) * (match[2] === 's' ? 1000 : match[2] === 'm' ? 60_000 : 1);
      if (ms < minMs) throw new InvalidArgumentError(`${name} must be at least ${minMs}ms`);
      return Math.round(ms);
    },
    show: (ms) =>
      ms === 0 ? '0' : ms % 60_000 === 0 ? `${ms / 60_000}m` : ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`,
  };
}

export const envName: Parser<string> = {
  read(value, name) {
    if (!/^[a-z0-9][a-z0-9_-]{0,31}$/.test(value))
      throw new InvalidArgumentError(
        `${name} must be lower-case letters, digits, _ or - (e.g. dev, pro), got "${value}"`,
      );
    return value;
  },
  show: String,
};

/** `--trusted-proxy`: checked here so a typo stops the start with the flag's name. */
export const trustedProxies: Parser<string> = {
  read(value) {
    try {
      parseTrustedProxies(value);
    } catch (error) {
      throw new InvalidArgumentError((error as Error).message);
    }
    return value;
  },
  show: String,
};

/** Any text, as it is. */
export const text: Parser<string> = { read: (value) => value, show: String };

/** Any text; empty is none. */
export const nonEmptyText: Parser<string | null> = { read: (value) => value || null, show: String };

/** Words separated by spaces. */
export const words: Parser<string[]> = {
  read: (value) => value.split(' ').filter(Boolean),
  show: (list) => list.join(' '),
};

/** A flag without an argument: on when given (commander reads it; its variable: see start-command.ts). */
export const toggle: Parser<boolean> = {
  read: (value) => !['', '0', 'false'].includes(value.toLowerCase()),
  show: String,
};
