/**
 * How a failure travels from the helper thread (pg-worker.ts) to the actor thread: the name of an
 * error factory and its arguments, so the actor throws the same AnvilError it would have made.
 */
import { type AnvilError, Errors } from '../../../shared/errors.js';
import { PG_API_SETTINGS } from './pg-settings.js';

export type PgFailureKind =
  | 'sqlFailed'
  | 'sqlConstraint'
  | 'sqlBusy'
  | 'sqlLimit'
  | 'sqlRefused'
  | 'diskFull'
  | 'migrationFailed'
  | 'migrationsUnreadable';
export interface PgFailure {
  kind: PgFailureKind;
  args: string[];
}

export function isPgFailure(value: unknown): value is PgFailure {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as PgFailure).kind === 'string' &&
    Array.isArray((value as PgFailure).args)
  );
}

/** The failure of an error thrown in the helper thread (an AnvilError of ours, or one of pg's). */
export function toPgFailure(error: unknown): PgFailure {
  if (isPgFailure(error)) return error;
  const message = error instanceof Error ? error.message : String(error);
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') {
    // No SQLSTATE: the server could not be reached (ECONNREFUSED, a timeout of the pool).
    return { kind: 'sqlBusy', args: [`the cluster's Postgres cannot be reached (${message})`] };
  }
  if (code === '57014')
    return {
      kind: 'sqlFailed',
      args: [
        `the statement ran longer than the API's statement_timeout (${PG_API_SETTINGS.statementTimeoutMs} ms) and was cancelled`,
      ],
    };
  if (code.startsWith('23')) return { kind: 'sqlConstraint', args: [message] };
  if (code === '53100') return { kind: 'diskFull', args: [message] };
  if (
    code === '40001' ||
    code === '40P01' ||
    code === '55P03' ||
    code === '53300' ||
    code.startsWith('08') ||
    code === '57P01'
  )
    return { kind: 'sqlBusy', args: [message] };
  return { kind: 'sqlFailed', args: [message] };
}

/** The AnvilError a failure stands for, thrown on the actor thread. */
export function fromPgFailure(failure: PgFailure): AnvilError {
  const [a = '', b = ''] = failure.args;
  switch (failure.kind) {
    case 'migrationFailed':
      return Errors.migrationFailed(a, b);
    case 'migrationsUnreadable':
      return Errors.migrationsUnreadable(a, b);
    default:
      return Errors[failure.kind](a);
  }
}
