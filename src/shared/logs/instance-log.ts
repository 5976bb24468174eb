import pino, { type Logger } from 'pino';

export type InstanceLog = Logger;

/** The instance's own structured log: JSON lines on stdout (pino), at `level` (the CLI passes ANVIL_LOG_LEVEL, default `info`). */
export function createInstanceLog(level: string): InstanceLog {
  return pino({ level, base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime });
}
