import { connect, type LookupFunction, type Socket } from 'node:net';
import { Http1ResponseParser, type ParsedResponse } from './http1-response-parser.js';

/**
 * How long a kept-alive connection may sit idle before it is closed here.
 * Under the 5 s that node:http servers (and many proxies) allow, so the
 * receiver rarely closes a connection just as a request is written to it.
 */
const IDLE_MS = 4_000;
/** How often idle connections past IDLE_MS are closed: one timer per pool, not one per request. */
const SWEEP_MS = 1_000;

// What node:http accepts in a header name and value (RFC 9110 token; no CR, LF, NUL or other controls).
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const BAD_VALUE = /[^\t\x20-\x7e\x80-\xff]/;

export interface Http1Target {
  /** `host:port` as the Host header carries it (brackets around IPv6). */
  host: string;
  /** Where to connect: a name or an address without brackets. */
  hostname: string;
  port: number;
  /** Path and query, as sent on the request line. */
  path: string;
  /** `user:password` from the URL, decoded (sent as Basic authorization), or null. */
  auth: string | null;
}

/** A network error or a malformed answer, with a code as node:http would give it. */
export class Http1Error extends Error {
  readonly code: string;
  constructor(
    message: string,
    code: string,
  ) {
    super(message);
    this.code = code;
  }
}

/**
 * One request in flight on a connection. Its deadline is a timer with this
 * object as its argument rather than closures around it: one of these per
 * delivery attempt, so what it allocates counts (issue 27).
 */
interface Exchange {
  conn: Conn;
  parser: Http1ResponseParser;
  resolve(response: ParsedResponse): void;
  reject(err: Http1Error): void;
  timeoutMs: number;
  deadline: NodeJS.Timeout | undefined;
}

/** State kept on each pooled socket. */
interface Conn {
  socket: Socket;
  key: string;
  exchange: Exchange | null;
  /** performance.now() when it went idle (set on release, read by take and the sweep). */
  idleSince: number;
}

/**
 * Keep-alive HTTP/1.1 POSTs over plain TCP, for delivery to http: targets.
 * node:http spent 38–56 µs of CPU per request in bench/http-client.mjs where
 * this takes 16–20 µs, and delivery is mostly HTTP requests. undici 7 (the
 * https: client, UndiciClient) was measured against it too (issue 12; 2-core
 * box, 40 000 requests × 5 rounds, medians): 22.0 vs 18.8 µs (+17 %) and
 * 23.2 vs 17.1 µs (+35 %) per request, node:http 44–52 µs; outside the 15 %
 * that would have let undici replace this for http: too. undici 8 on Node 24
 * (2026-11-26, bench/results/http-client.md): +13.7 to +41.7 % per run, +30 % over
 * the same-round pairs: still outside. What it does:
 * one request at a time per connection, idle connections reused
 * last-in-first-out per origin and closed after IDLE_MS (one sweep timer per
 * pool rather than a timer armed and cleared around every request), the request head
 * built in one string and copied with the body into one buffer, one write, the
 * response read by Http1ResponseParser. Connecting resolves names through
 * `lookup` (the SSRF guard's). How many requests run at once per origin is
 * the caller's business (flow control per target, then OriginSlots per
 * origin); https: targets go through undici.
 */
export class Http1Pool {
  private readonly idle = new Map<string, Conn[]>();
  private readonly busy = new Set<Conn>();
  private closed = false;
  private sweeper: NodeJS.Timeout | null = null;

  private readonly lookup: LookupFunction;
  private readonly maxResponseBytes: number;
  constructor(
    lookup: LookupFunction,
    maxResponseBytes: number,
  ) {
    this.lookup = lookup;
    this.maxResponseBytes = maxResponseBytes;
  }

  /**
   * Sends one POST; resolves with the response, rejects with an Http1Error.
   * One deadline of `timeoutMs` covers connect, request and the whole
   * response: past it the connection is destroyed and the promise rejects
   * with ETIMEDOUT.
   */
  post(target: Http1Target, headers: Readonly<Record<string, string>>, body: Buffer, timeoutMs: number): Promise<ParsedResponse> {
    let head: string;
    try {
      head = requestHead(target, headers, body.length);
    } catch (err) {
      return Promise.reject(err as Http1Error);
    }
    if (this.closed) return Promise.reject(new Http1Error('the HTTP client is closed', 'ECLOSED'));
    const conn = this.take(target);
    return new Promise<ParsedResponse>((resolve, reject) => {
      const exchange: Exchange = { conn, parser: new Http1ResponseParser(this.maxResponseBytes), resolve, reject, timeoutMs, deadline: undefined };
      exchange.deadline = setTimeout(expire, timeoutMs, exchange);
      conn.exchange = exchange;
      // Head and body in one buffer, one write, rather than a corked head
      // string and body (a writev: chunk list, string storage): 98.8 % of the
      // backlog's CPU per event, 4 alternated rounds (bench/results/cpu-ab.md).
      // requestHead refuses anything over \xff: one byte per character in latin1.
      const request = Buffer.allocUnsafe(head.length + body.length);
      request.write(head, 0, 'latin1');
      body.copy(request, head.length);
      conn.socket.write(request);
    });
  }

  /** Closes idle connections; busy ones close when their exchange ends. */
  close(): void {
    this.closed = true;
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = null;
    for (const list of this.idle.values()) for (const conn of list) conn.socket.destroy();
    this.idle.clear();
    for (const conn of this.busy) conn.socket.destroy();
  }

  private take(target: Http1Target): Conn {
    const key = `${target.hostname}\n${target.port}`;
    const list = this.idle.get(key);
    // Most recently used first; one idle past IDLE_MS may be closing at the receiver's end already.
    const now = performance.now();
    let conn = list?.pop();
    while (conn && (conn.socket.destroyed || now - conn.idleSince > IDLE_MS)) {
      conn.socket.destroy();
      conn = list!.pop();
    }
    conn ??= this.open(key, target);
    this.busy.add(conn);
    return conn;
  }

  private open(key: string, target: Http1Target): Conn {
    const socket = connect({ host: target.hostname, port: target.port, lookup: this.lookup, noDelay: true });
    const conn: Conn = { socket, key, exchange: null, idleSince: 0 };
    socket.on('data', (data: Buffer) => {
      const exchange = conn.exchange;
      // Bytes nobody asked for (on an idle connection): it cannot be trusted for the next request.
      if (!exchange) return void socket.destroy();
      const step = exchange.parser.push(data);
      if (step.kind === 'more') return;
      detach(conn);
      if (step.kind === 'error') {
        socket.destroy();
        return exchange.reject(new Http1Error(step.message, 'EPROTO'));
      }
      // Reused only once the whole request was handed to the kernel (an early
      // answer with our body still queued would leave the rest of it to be
      // read as the next request), as node:http reuses a socket only after
      // its request finished.
      this.release(conn, step.response.reusable && socket.writableLength === 0);
      exchange.resolve(step.response);
    });
    const ended = (err?: NodeJS.ErrnoException) => {
      this.forget(conn);
      const exchange = detach(conn);
      if (!exchange) return;
      if (err) return exchange.reject(new Http1Error(err.message, err.code ?? 'ERR'));
      const step = exchange.parser.end();
      if (step.kind === 'done') exchange.resolve(step.response);
      else exchange.reject(new Http1Error(step.kind === 'error' ? step.message : 'connection closed', 'ECONNRESET'));
    };
    socket.on('error', ended);
    socket.on('end', () => {
      ended();
      socket.destroy();
    });
    socket.on('close', () => ended());
    return conn;
  }

  private release(conn: Conn, reusable: boolean): void {
    this.busy.delete(conn);
    if (!reusable || this.closed) return void conn.socket.destroy();
    let list = this.idle.get(conn.key);
    if (!list) this.idle.set(conn.key, (list = []));
    conn.idleSince = performance.now();
    list.push(conn);
    if (!this.sweeper) {
      this.sweeper = setInterval(() => this.sweep(), SWEEP_MS);
      this.sweeper.unref();
    }
  }

  /** Closes connections idle past IDLE_MS (oldest first in each list: they were released earliest). */
  private sweep(): void {
    const oldest = performance.now() - IDLE_MS;
    for (const list of this.idle.values()) {
      while (list.length > 0 && list[0]!.idleSince < oldest) list.shift()!.socket.destroy();
    }
    if (this.idle.size === 0 && this.busy.size === 0 && this.sweeper) {
      clearInterval(this.sweeper);
      this.sweeper = null;
    }
  }

  private forget(conn: Conn): void {
    this.busy.delete(conn);
    const list = this.idle.get(conn.key);
    if (!list) return;
    const at = list.indexOf(conn);
    if (at !== -1) list.splice(at, 1);
    if (list.length === 0) this.idle.delete(conn.key);
  }
}

/** Ends a connection's exchange (answered, failed or timed out): its deadline goes with it. */
function detach(conn: Conn): Exchange | null {
  const exchange = conn.exchange;
  if (exchange === null) return null;
  conn.exchange = null;
  clearTimeout(exchange.deadline);
  return exchange;
}

/** The deadline passed: the connection is cut (whatever it still brings is not read) and the caller told. */
function expire(exchange: Exchange): void {
  const conn = exchange.conn;
  if (conn.exchange !== exchange) return;
  conn.exchange = null;
  conn.socket.destroy();
  exchange.reject(new Http1Error(`no complete response within ${exchange.timeoutMs} ms`, 'ETIMEDOUT'));
}

/**
 * The request head as node:http would send it for request(url, { method:
 * 'POST', headers }): the given headers in their order, then Host, then
 * Authorization from URL credentials, then Connection: keep-alive, each only
 * when not given. A name or value node:http would refuse is refused here.
 */
export function requestHead(target: Http1Target, headers: Readonly<Record<string, string>>, bodyLength: number): string {
  let head = `POST ${target.path} HTTP/1.1\r\n`;
  let host = false;
  let authorization = false;
  let connection = false;
  let length = false;
  for (const name in headers) {
    const value = headers[name]!;
    if (!TOKEN.test(name)) throw new Http1Error(`Header name must be a valid HTTP token ["${name}"]`, 'ERR_INVALID_HTTP_TOKEN');
    if (BAD_VALUE.test(value)) throw new Http1Error(`Invalid character in header content ["${name}"]`, 'ERR_INVALID_CHAR');
    const lower = name.toLowerCase();
    if (lower === 'host') host = true;
    else if (lower === 'authorization') authorization = true;
    else if (lower === 'connection') connection = true;
    else if (lower === 'content-length') length = true;
    head += `${name}: ${value}\r\n`;
  }
  if (!length) head += `content-length: ${bodyLength}\r\n`;
  if (!host) head += `Host: ${target.host}\r\n`;
  if (!authorization && target.auth !== null) head += `Authorization: Basic ${Buffer.from(target.auth).toString('base64')}\r\n`;
  if (!connection) head += 'Connection: keep-alive\r\n';
  return `${head}\r\n`;
}
