/**
 * Why a thread said one of its actors keeps it busy (the Busy frame's u32, cell/actors/cpu-shares.ts):
 * logged by the router with the move, so an operator (and a benchmark) can tell a real hog from a
 * stall that only looked like one.
 */
export const BusyReason = {
  /** A shared thread near a full core, this actor most of its timed code, twice within 2 s. */
  Dominant: 0,
  /** One stretch of its own code held a shared thread long, twice within 2 s. */
  LongStretch: 1,
  /** One custom directive call used that much of its isolate's CPU at once. */
  LongSandboxCall: 2,
  /** Its api.yaml lets a call run longer than a shared thread's slice: it never stays on one. */
  LongCalls: 3,
  /** A thread of its own near a full core. */
  OwnThreadFull: 4,
} as const;
export type BusyReason = (typeof BusyReason)[keyof typeof BusyReason];

const TEXT: Record<BusyReason, string> = {
  [BusyReason.Dominant]: 'most of a busy shared thread',
  [BusyReason.LongStretch]: 'long stretches on a shared thread',
  [BusyReason.LongSandboxCall]: 'a long custom directive call on a shared thread',
  [BusyReason.LongCalls]: 'calls allowed longer than a shared thread gives',
  [BusyReason.OwnThreadFull]: 'its own thread busy',
};

/** The reason a Busy frame carries, as the log shows it ("unknown" from a thread that sent none). */
export function busyReasonText(code: number | null): string {
  return code !== null && code in TEXT ? TEXT[code as BusyReason] : 'unknown';
}
