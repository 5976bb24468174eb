/** The first frame on a thread's connection, to the router or to a peer: who the thread is. */
import { FrameType, jsonFrame } from './frames.js';

/**
 * The version of the frames and messages of src/shared/protocol. A thread says which it speaks in its
 * hello, and the router (or a peer) closes the connection of one that speaks another: a cell
 * started from another build of anvil than the router's. Add one to it whenever a frame's layout
 * or a message's meaning changes. (2: envelopes carry a label, a response's route; a CallResult
 * carries the target's Response payload as it came. 3: a request and a Call carry the bus budget,
 * a response what a bus call left of it. 4: a shared thread's actors share one connection, a
 * channel each: Channel and End frames.)
 */
export const WIRE_VERSION = 4;

export interface ThreadHello {
  /** The wire version the thread speaks (WIRE_VERSION of its build; 0 when its hello had none). */
  version: number;
  token: string;
  cell: number;
  /** '' from a spare that dialled ahead: its actor's hello follows on the same socket once it has one. */
  actor: string;
  thread: number;
  /** Where the thread takes bus calls straight from other actor threads (its peer socket). */
  peer?: string;
}

export function encodeHello(hello: ThreadHello): Buffer {
  return jsonFrame(FrameType.Hello, hello);
}

/** The hello, or null when the payload is not one. A hello without a version (older than versions) has version 0. */
export function decodeHello(payload: Buffer): ThreadHello | null {
  let value: Partial<ThreadHello> | null;
  try {
    value = JSON.parse(payload.toString('utf8')) as Partial<ThreadHello> | null;
  } catch {
    return null;
  }
  if (typeof value !== 'object' || value === null || typeof value.token !== 'string' || typeof value.actor !== 'string')
    return null;
  if (typeof value.version !== 'number') value.version = 0;
  return value as ThreadHello;
}
