import type { LockHolder } from './lock-holder.js';

/**
 * Every error Anvil raises on purpose has a code, an HTTP status and a message, in the manner of
 * Fastify's FST_ERR_* constants. Make them with `Errors.someName(…)` (catalogue.ts), not by hand.
 */
export class AnvilError extends Error {
  readonly code: string;
  readonly status: number;
  /** Logged although its status is below 500: a refused input an operator should see. */
  readonly logged: boolean;
  /** Sent as `retry-after` when set: the refusal may pass later. */
  readonly retryAfterSeconds: number | undefined;
  constructor(code: string, status: number, message: string, logged = false, retryAfterSeconds?: number) {
    super(message);
    this.name = 'AnvilError';
    this.code = code;
    this.status = status;
    this.logged = logged;
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/**
 * An API ran into one of its quotas on shared stores. Its message is written for the API's
 * clients (it names the quota and the setting that moves it, and reveals nothing of the host), so
 * it is shown whatever the status (see `publicMessage`).
 */
export class QuotaError extends AnvilError {
  constructor(
    code: string,
    status: number,
    message: string,
    /** Counted under this name in `anvil_quota_refusals_total{quota}`. */
    readonly quota: string,
    retryAfterSeconds?: number,
  ) {
    super(code, status, message, false, retryAfterSeconds);
  }
}

/**
 * The registry refused an argument (a host name, key, env, path, release…); `field` names it and
 * starts the message (`name: …`). The CLI prints it; over HTTP it is a 500 (the management API
 * checks what it passes on, so a refusal there is the server's failure).
 */
export class RegistryValidationError extends AnvilError {
  constructor(
    code: string,
    status: number,
    message: string,
    readonly field: string,
  ) {
    super(code, status, message);
    this.name = 'RegistryValidationError';
  }
}

/** A second instance on the same data directory: refused before it reads or writes anything there. */
export class DataDirInUseError extends AnvilError {
  constructor(
    code: string,
    status: number,
    message: string,
    readonly dataDir: string,
    readonly lockFile: string,
    readonly holder: LockHolder,
  ) {
    super(code, status, message);
    this.name = 'DataDirInUseError';
  }
}
