import pino, { type Logger } from 'pino';

export type InstanceLog = Logger;

/** The instance's own structured log: JSON lines on stdout (pino). Level from ANVIL_LOG_LEVEL. */
export function createInstanceLog(): InstanceLog {
  return pino({ level: process.env.ANVIL_LOG_LEVEL ?? 'info', base: { pid: process.pid }, timestamp: pino.stdTimeFunctions.isoTime });
}
