/** Calls that go straight from one actor thread to another (its peer), and the frames about them. */
import { FrameType, jsonFrame, u32Frame } from './frames.js';

/** A thread of API `key` that takes bus calls straight from the caller's thread (FrameType.Peer). */
export interface PeerOffer {
  key: string;
  /** The target's actor (its release): a newer offer for the same key replaces an older one. */
  actor: string;
  address: string;
}

export function encodePeerOffer(offer: PeerOffer): Buffer {
  return jsonFrame(FrameType.Peer, offer);
}

export function decodePeerOffer(payload: Buffer): PeerOffer {
  return JSON.parse(payload.toString('utf8')) as PeerOffer;
}

/** Peer → caller: request `number` was not run (the peer stopped); send it through the router. */
export function notTakenFrame(number: number): Buffer {
  return u32Frame(FrameType.Retire, number);
}

/** The request a Retire frame from a peer gives back (notTakenFrame), or null for a plain Retire. */
export function decodeNotTaken(payload: Buffer): number | null {
  return payload.length >= 4 ? payload.readUInt32LE(0) : null;
}
