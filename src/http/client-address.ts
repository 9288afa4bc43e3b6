import type { HttpResponse } from 'uWebSockets.js';
import { NetworkSet } from '../net/cidr.js';

/**
 * Where a request's client address comes from, which IP allowlists check.
 *
 * - Behind the header guard's front (`server.headerGuard: true`): the PROXY
 *   header the front writes once at the start of each private connection.
 *   uWS 20.30 also takes a PROXY header at the start of any later request, but
 *   the front never forwards a byte the client placed at such a position.
 * - With uWS on the public port: the socket's peer, unless that peer is in
 *   `server.proxyProtocolFrom` (a load balancer that speaks PROXY protocol);
 *   then the address its PROXY header named. Anyone else's PROXY header is
 *   ignored, so nobody outside that range can pick their own address.
 */
export class ClientAddressSource {
  private readonly trusted: NetworkSet | null;

  constructor(
    readonly guarded: boolean,
    proxyProtocolFrom: readonly string[] = [],
  ) {
    this.trusted = !guarded && proxyProtocolFrom.length > 0 ? NetworkSet.parse(proxyProtocolFrom) : null;
  }

  of(res: HttpResponse): string {
    if (this.guarded) return text(res.getProxiedRemoteAddressAsText());
    const peer = text(res.getRemoteAddressAsText());
    if (this.trusted === null || !this.trusted.has(peer)) return peer;
    const proxied = text(res.getProxiedRemoteAddressAsText());
    return proxied === '' ? peer : proxied;
  }
}

function text(bytes: ArrayBuffer): string {
  return Buffer.from(bytes).toString();
}
