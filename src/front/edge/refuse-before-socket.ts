import type { Server } from 'node:net';
import { bareAddress } from './client-address.js';

/** What node's listening handle passes for a new connection (lib/net.js `onconnection`). */
interface ClientHandle {
  getpeername(out: { address?: string }): number;
  close(): void;
}

type OnConnection = (this: unknown, status: number, client?: ClientHandle) => void;

/**
 * Closes a new connection whose peer `refuse(address)` names before node makes a Socket of it.
 * A flood of connections from one address competes with every client's for the kernel's accept
 * queue, and the Socket (its streams, then their destruction) is most of what a refused connection
 * costs the router; closing the bare handle costs a fraction. It wraps the listening handle's
 * `onconnection`, node's own callback for an accepted connection (what `server.maxConnections`
 * uses to drop one); on a node where it is not found, nothing changes and the gate refuses as usual.
 */
export function refuseBeforeSocket(server: Server, refuse: (address: string) => boolean): void {
  const handle = (server as unknown as { _handle?: { onconnection?: OnConnection } | null })._handle;
  const original = handle?.onconnection;
  if (handle == null || typeof original !== 'function') return;
  handle.onconnection = function (this: unknown, status: number, client?: ClientHandle) {
    if (status === 0 && client !== undefined) {
      const peer: { address?: string } = {};
      if (client.getpeername(peer) === 0 && peer.address !== undefined && refuse(bareAddress(peer.address))) {
        client.close();
        return;
      }
    }
    original.call(this, status, client);
  };
}
