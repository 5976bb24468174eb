export interface FollowLimits {
  /** Clients following one API's log at once (429 beyond). */
  perApi: number;
  /** Bytes a client may have waiting (here and in its socket's buffer) before it is dropped. */
  bufferedBytes: number;
}

export const DEFAULT_FOLLOW_LIMITS: FollowLimits = { perApi: 8, bufferedBytes: 1024 * 1024 };
