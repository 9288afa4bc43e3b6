// Frozen copy of the header guard as of commit 2bf0853 (transpiled from
// src/http/header-guard.ts by tsc, module NodeNext, target ES2022; imports made local).
// Kept only so bench/ingress-modes.mjs (and bench/relay-floor.mjs) can compare
// the old guard with the new front in the same run, through
// STREAMGATE_GUARD_WORKER. Not part of streamgate: delete this folder once the
// A/B is recorded.
import { createServer, connect } from 'node:net';
import { isIPv4, isIPv6 } from 'node:net';
import { RequestSanitizer } from './request-sanitizer.js';
/** How long a refused connection keeps draining the client's bytes before it is dropped. */
const LINGER_MS = 5_000;
const PROXY_V2_SIGNATURE = Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]);
/**
 * A PROXY protocol v2 header (the binary form HAProxy defined) naming the
 * client: uWS reads it and reports the address through
 * getProxiedRemoteAddress, so IP allowlists see the real client.
 */
export function proxyHeader(address, port, localAddress, localPort) {
    const v4 = isIPv4(address) && isIPv4(localAddress);
    const v6 = !v4 && isIPv6(address);
    if (!v4 && !v6) {
        // Unknown family: LOCAL command, no address (uWS then reports the socket's own peer).
        const local = Buffer.alloc(16);
        PROXY_V2_SIGNATURE.copy(local);
        local[12] = 0x20;
        return local;
    }
    const size = v4 ? 12 : 36;
    const buf = Buffer.alloc(16 + size);
    PROXY_V2_SIGNATURE.copy(buf);
    buf[12] = 0x21; // version 2, PROXY
    buf[13] = v4 ? 0x11 : 0x21; // TCP over IPv4 / IPv6
    buf.writeUInt16BE(size, 14);
    if (v4) {
        address.split('.').forEach((o, i) => (buf[16 + i] = Number(o)));
        localAddress.split('.').forEach((o, i) => (buf[20 + i] = Number(o)));
        buf.writeUInt16BE(port, 24);
        buf.writeUInt16BE(localPort, 26);
    }
    else {
        ipv6Bytes(address).copy(buf, 16);
        ipv6Bytes(isIPv6(localAddress) ? localAddress : `::ffff:${localAddress}`).copy(buf, 32);
        buf.writeUInt16BE(port, 48);
        buf.writeUInt16BE(localPort, 50);
    }
    return buf;
}
function ipv6Bytes(address) {
    const out = Buffer.alloc(16);
    let text = address;
    const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
    if (dotted) {
        const [a, b, c, d] = dotted[1].split('.').map(Number);
        text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
    }
    const [head, tail] = text.includes('::') ? text.split('::') : [text, ''];
    const h = head ? head.split(':') : [];
    const t = tail ? tail.split(':') : [];
    const groups = [...h, ...Array(8 - h.length - t.length).fill('0'), ...t];
    groups.forEach((g, i) => out.writeUInt16BE(parseInt(g, 16) || 0, i * 2));
    return out;
}
/**
 * The parts as one buffer when they are back-to-back slices of the same memory
 * (a clean head and the body behind it, as read): one write() instead of a
 * writev(); null otherwise, or when there is nothing to write.
 */
function contiguous(parts) {
    if (parts.length === 1)
        return parts[0];
    if (parts.length === 0)
        return null;
    const first = parts[0];
    let end = first.byteOffset + first.length;
    for (let i = 1; i < parts.length; i++) {
        const part = parts[i];
        if (part.buffer !== first.buffer || part.byteOffset !== end)
            return null;
        end += part.length;
    }
    return Buffer.from(first.buffer, first.byteOffset, end - first.byteOffset);
}
/**
 * The public listener when `server.headerGuard` is on: every connection is
 * relayed to uWS through a RequestSanitizer (see there for why), with a PROXY
 * v2 header first so uWS knows the client's address. Responses flow back
 * untouched. Costs a second socket hop per request; see README.
 */
export class HeaderGuard {
    options;
    server = null;
    sockets = new Set();
    constructor(options) {
        this.options = options;
    }
    listen() {
        const server = createServer({ noDelay: true }, (client) => this.relay(client));
        this.server = server;
        return new Promise((resolve, reject) => {
            server.once('error', reject);
            server.listen(this.options.port, this.options.host, () => {
                server.off('error', reject);
                const address = server.address();
                resolve(typeof address === 'object' && address ? address.port : this.options.port);
            });
        });
    }
    /** Stops accepting; open connections finish their exchanges (uWS answers them). */
    close() {
        this.server?.close();
        this.server = null;
    }
    /** Ends every relayed connection at once (after the drain). */
    destroyAll() {
        for (const socket of this.sockets)
            socket.destroy();
    }
    relay(client) {
        const upstream = connect(this.options.upstreamPath);
        this.sockets.add(client);
        const sanitizer = new RequestSanitizer(this.options.maxHeadBytes, this.options.bodyLimits);
        let done = false;
        const finish = () => {
            if (done)
                return;
            done = true;
            this.sockets.delete(client);
            client.destroy();
            upstream.destroy();
        };
        // uWS closing after an early answer (the body left unread) resets the
        // socket: the answer was already read and piped, so the client side is
        // ended, not destroyed, or that answer would be dropped unsent.
        const upstreamGone = () => {
            if (done)
                return;
            done = true;
            this.sockets.delete(client);
            upstream.unpipe(client);
            client.end();
            upstream.destroy();
        };
        client.on('error', finish);
        client.on('close', finish);
        upstream.on('error', upstreamGone);
        upstream.on('close', upstreamGone);
        upstream.write(proxyHeader(client.remoteAddress ?? '', client.remotePort ?? 0, client.localAddress ?? '', client.localPort ?? 0));
        upstream.pipe(client);
        client.on('data', (chunk) => {
            const { forward, refuse } = sanitizer.push(chunk);
            // One write for the head and the body bytes behind it: uWS may answer from
            // the head and close (Connection: close); a body arriving after that close
            // resets the socket, and the answer would be lost with it.
            let flowing = true;
            const whole = contiguous(forward);
            if (whole)
                flowing = upstream.write(whole);
            else {
                upstream.cork();
                for (const part of forward)
                    flowing = upstream.write(part) && flowing;
                upstream.uncork();
            }
            if (refuse) {
                // Lingering close: answer, send FIN, and keep reading (and dropping) what
                // the client still sends for a while. Closing with its data unread
                // would reset the connection, and a reset can destroy the answer
                // before the client reads it.
                upstream.unpipe(client);
                upstream.destroy();
                client.end(refuse);
                setTimeout(() => client.destroy(), LINGER_MS).unref();
                return;
            }
            if (!flowing) {
                client.pause();
                upstream.once('drain', () => client.resume());
            }
        });
        client.on('end', () => upstream.end());
    }
}
