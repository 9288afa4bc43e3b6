import { readFileSync } from 'node:fs';
import type { IncomingHttpHeaders } from 'node:http';
import { isIP, type Socket } from 'node:net';
import { createSecureContext, rootCertificates, type SecureContext } from 'node:tls';
import type { Agent, buildConnector, Dispatcher } from 'undici';
import type { SsrfGuard } from './ssrf-guard.js';

type Undici = typeof import('undici');

/**
 * How long a kept-alive connection may sit idle before it is closed here when
 * the receiver sent no `Keep-Alive: timeout=` hint. Under the 5 s node:http
 * servers (and many proxies) allow. With a hint, undici keeps the connection
 * for the hint minus 2 s (its keepAliveTimeoutThreshold), and not at all
 * when that leaves nothing.
 */
const IDLE_MS = 4_000;

/** Connection-level failures that can also mean "the receiver closed the kept-alive connection as we wrote to it". */
const STALE_CONNECTION = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE']);
/** Connect failures after which the host's next checked address is tried. */
const NEXT_ADDRESS = new Set(['ECONNREFUSED', 'ENETUNREACH', 'EHOSTUNREACH', 'EADDRNOTAVAIL', 'UND_ERR_CONNECT_TIMEOUT']);

export interface TlsTrust {
  /** PEM text of CAs trusted in addition to the default ones (delivery.tls.caFile). */
  extraCaPem?: string | null;
}

/** What one exchange came to, before the dispatcher adds its duration. */
export type ExchangeResult =
  | { kind: 'response'; status: number; headers: IncomingHttpHeaders; body: Buffer }
  | { kind: 'error'; error: string; code: string; beforeResponse: boolean };

/** delivery.tls.caFile read at boot ('' for none); an unreadable file or one without a PEM certificate stops the boot. */
export function loadTlsTrust(caFile: string): TlsTrust {
  if (caFile === '') return {};
  let pem: string;
  try {
    pem = readFileSync(caFile, 'utf8');
  } catch (err) {
    throw new Error(`delivery.tls.caFile: cannot read ${caFile}: ${(err as Error).message}`);
  }
  if (!pem.includes('-----BEGIN CERTIFICATE-----')) throw new Error(`delivery.tls.caFile: ${caFile} holds no PEM certificate`);
  return { extraCaPem: pem };
}

/**
 * A TLS SecureContext trusting the default CAs plus `extraCaPem`, built once:
 * passing `ca` to every tls.connect would parse the whole store per connection.
 */
export function secureContextFor(trust: TlsTrust): SecureContext | undefined {
  if (!trust.extraCaPem) return undefined;
  return createSecureContext({ ca: [...rootCertificates, trust.extraCaPem] });
}

/**
 * undici's `connect` for delivery: resolves the host once through the SSRF
 * guard (every A and AAAA record checked, docs/delivery.md#delivery-engine), then connects to a
 * checked address, never to the name, so a second DNS answer cannot steer the
 * connection elsewhere. For TLS the URL's host name stays the SNI and the
 * name the certificate is checked against (an address literal is checked as
 * an address). When an address refuses the connection the next checked one
 * is tried.
 */
export function guardedConnector(undici: Undici, guard: SsrfGuard, secureContext: SecureContext | undefined): buildConnector.connector {
  // The TLS handshake offers HTTP/1.1 only: undici 8's connector offers h2 too unless told not to,
  // and it is the connector's ALPN list, not the Agent's allowH2, that the receiver sees.
  const base = undici.buildConnector({ ...(secureContext ? { secureContext } : {}), timeout: 10_000, allowH2: false });
  return (opts, callback) => {
    const host = opts.hostname.replace(/^\[|\]$/g, '');
    const literal = isIP(host) !== 0;
    const tryFrom = (addresses: string[], at: number) => {
      base({ ...opts, hostname: addresses[at]!, servername: literal ? undefined : host }, (err, socket) => {
        if (err && at + 1 < addresses.length && NEXT_ADDRESS.has((err as NodeJS.ErrnoException).code ?? '')) return tryFrom(addresses, at + 1);
        if (err) callback(err, null);
        else callback(null, socket as Socket);
      });
    };
    if (literal) {
      if (guard.isAllowed(host)) return tryFrom([host], 0);
      return callback(refused(`refused address ${host}`), null);
    }
    guard.lookup(host, { all: true }, (err, addresses) => {
      if (err) return callback(err, null);
      tryFrom((addresses as Array<{ address: string }>).map((a) => a.address), 0);
    });
  };
}

function refused(message: string): Error {
  const e: NodeJS.ErrnoException = new Error(message);
  e.code = 'ESSRF';
  return e;
}

/**
 * Keep-alive HTTP/1.1 POSTs (no HTTP/2) through an undici Agent (a Pool per origin): the
 * guarded connector above, connections kept IDLE_MS or as the receiver's
 * Keep-Alive hint says, one request per connection at a time, no redirects
 * (undici never follows them without an interceptor), undici's own header and
 * body timeouts off (the dispatcher's one deadline covers the attempt).
 * Responses are read up to `maxResponseBytes`; past that the body is cut and
 * the connection closed, and the status is still the answer (undici's
 * maxResponseSize would fail the request instead, so it is not used).
 */
export class UndiciClient {
  /**
   * Built at the first https: request: undici is ~5.6 MB of live heap that
   * every full collection walks, in a process that may never send over TLS
   * (http: targets go through Http1Pool).
   */
  private agent: Agent | null = null;
  private loading: Promise<Agent> | null = null;
  private closed = false;

  private readonly guard: SsrfGuard;
  private readonly connectionsPerOrigin: number;
  private readonly maxResponseBytes: number;
  private readonly trust: TlsTrust;
  constructor(
    guard: SsrfGuard,
    connectionsPerOrigin: number,
    maxResponseBytes: number,
    trust: TlsTrust = {},
  ) {
    this.guard = guard;
    this.connectionsPerOrigin = connectionsPerOrigin;
    this.maxResponseBytes = maxResponseBytes;
    this.trust = trust;
  }

  /**
   * One POST. `onAbandon` receives the function that stops it (the caller's
   * deadline): the request is then never written, or its connection is cut.
   */
  post(origin: string, path: string, headers: Record<string, string>, body: Buffer, onAbandon: (abandon: () => void) => void): Promise<ExchangeResult> {
    if (this.agent !== null) return this.dispatch(this.agent, origin, path, headers, body, onAbandon);
    // The first request waits for undici; a deadline that passes meanwhile stops it before it is written.
    let abandoned = false;
    let stop: (() => void) | null = null;
    onAbandon(() => {
      abandoned = true;
      stop?.();
    });
    return this.load().then(
      (agent): Promise<ExchangeResult> | ExchangeResult =>
        abandoned ? { kind: 'error', error: 'abandoned before it was sent', code: 'ETIMEDOUT', beforeResponse: true } : this.dispatch(agent, origin, path, headers, body, (a) => (stop = a)),
      (err: Error): ExchangeResult => ({ kind: 'error', error: `the HTTPS client could not be loaded: ${err.message}`, code: 'ECONFIG', beforeResponse: true }),
    );
  }

  private dispatch(agent: Agent, origin: string, path: string, headers: Record<string, string>, body: Buffer, onAbandon: (abandon: () => void) => void): Promise<ExchangeResult> {
    return new Promise<ExchangeResult>((resolve) => {
      const exchange = new Exchange(this.maxResponseBytes, resolve);
      onAbandon(() => exchange.abandon());
      agent.dispatch({ origin, path, method: 'POST', headers, body }, exchange);
    });
  }

  private load(): Promise<Agent> {
    this.loading ??= import('undici').then((undici) => {
      const agent = new undici.Agent({
        connections: this.connectionsPerOrigin,
        pipelining: 1,
        keepAliveTimeout: IDLE_MS,
        keepAliveMaxTimeout: 600_000,
        headersTimeout: 0,
        bodyTimeout: 0,
        connect: guardedConnector(undici, this.guard, secureContextFor(this.trust)),
        // undici 8 would speak HTTP/2 where the TLS handshake settles on it (the connector above
        // does not offer it). Delivery is HTTP/1.1 keep-alive: one request per connection at a
        // time, connectionsPerOrigin as the per-origin cap, the receiver's Keep-Alive hint, and the
        // same answers as Http1Pool gives for http: targets.
        allowH2: false,
      });
      // Closed while undici loaded: requests still coming fail as on a closed agent.
      if (this.closed) void agent.destroy().catch(() => {});
      this.agent = agent;
      return agent;
    });
    return this.loading;
  }

  close(): Promise<void> {
    this.closed = true;
    return this.agent?.destroy() ?? Promise.resolve();
  }
}

/** True when an exchange error may come from a kept-alive connection the receiver had closed: worth one more try. */
export function mayBeStaleConnection(result: ExchangeResult): boolean {
  return result.kind === 'error' && result.beforeResponse && STALE_CONNECTION.has(result.code);
}

/** Why an exchange is stopped on our side; never reported (the exchange has its answer by then). */
const ABANDONED = new Error('abandoned by the dispatcher');
const CUT = new Error('response body past maxResponseBytes');

/** A dispatch handler (undici 8's controller interface) that collects one response. */
class Exchange implements Dispatcher.DispatchHandler {
  private status = 0;
  private headers: IncomingHttpHeaders | null = null;
  private readonly chunks: Buffer[] = [];
  private size = 0;
  private controller: Dispatcher.DispatchController | null = null;
  private done = false;

  private readonly max: number;
  private readonly resolve: (result: ExchangeResult) => void;
  constructor(
    max: number,
    resolve: (result: ExchangeResult) => void,
  ) {
    this.max = max;
    this.resolve = resolve;
  }

  abandon(): void {
    if (this.done) return;
    this.done = true;
    // Before onRequestStart undici still holds the request: it is aborted there, unwritten.
    this.controller?.abort(ABANDONED);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.controller = controller;
    if (this.done) controller.abort(ABANDONED);
  }

  onResponseStart(_controller: Dispatcher.DispatchController, status: number, headers: IncomingHttpHeaders): void {
    if (status < 200) return; // interim answers (103 and the like)
    this.status = status;
    this.headers = asNodeHeaders(headers);
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.done) return;
    if (this.size + chunk.length <= this.max) {
      this.chunks.push(chunk);
      this.size += chunk.length;
      return;
    }
    // Read enough: the status and headers are the answer. Cut the rest.
    this.chunks.push(chunk.subarray(0, this.max - this.size));
    this.size = this.max;
    this.answer();
    controller.abort(CUT);
  }

  onResponseEnd(): void {
    if (this.done) return;
    // undici hands the connection back to its pool in a setImmediate queued
    // just after this call (to see a close the receiver sends right after the
    // response). Answering in the immediate after that one lets the caller's
    // next request (a lane's next event) reuse this connection; answered at
    // once, it would find the connection still taken and open a second one.
    setImmediate(() => setImmediate(() => this.answer()));
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    if (this.done) return;
    this.done = true;
    const e = err as NodeJS.ErrnoException;
    const beforeResponse = this.headers === null;
    this.resolve({ kind: 'error', ...describe(e), beforeResponse });
  }

  private answer(): void {
    if (this.done) return;
    this.done = true;
    const body = this.chunks.length === 1 ? this.chunks[0]! : Buffer.concat(this.chunks, this.size);
    this.resolve({ kind: 'response', status: this.status, headers: this.headers ?? {}, body });
  }
}

/** An undici or socket error as a code the rest of delivery knows (node:http's where one exists) and a message saying what went wrong. */
function describe(e: NodeJS.ErrnoException): { code: string; error: string } {
  const code = e.code ?? 'ERR';
  switch (code) {
    case 'UND_ERR_SOCKET':
      return { code: 'ECONNRESET', error: `connection closed before the response ended (${e.message})` };
    case 'UND_ERR_CONNECT_TIMEOUT':
      return { code: 'ETIMEDOUT', error: e.message };
    case 'UND_ERR_INVALID_ARG':
      return { code: 'EREQUEST', error: e.message };
    case 'UND_ERR_HEADERS_OVERFLOW':
      return { code: 'EPROTO', error: 'response headers too large' };
    default:
      if (code.startsWith('HPE_')) return { code: 'EPROTO', error: `malformed response: ${e.message} (${code})` };
      if (code.startsWith('ERR_TLS_') || /CERT|SELF_SIGNED|UNABLE_TO_|ERR_SSL_/.test(code)) {
        return { code, error: `TLS: ${e.message}` };
      }
      return { code, error: e.message };
  }
}

/**
 * undici's parsed headers (lower-case names; a repeated header as a list) as
 * node:http presents them, as Http1Pool does too: set-cookie always a list,
 * other repeats joined with ", ". The object is this response's own: changed
 * in place.
 */
function asNodeHeaders(headers: IncomingHttpHeaders): IncomingHttpHeaders {
  for (const name of Object.keys(headers)) {
    const value = headers[name];
    if (name === 'set-cookie') {
      if (typeof value === 'string') headers[name] = [value];
    } else if (Array.isArray(value)) {
      headers[name] = value.join(', ');
    }
  }
  return headers;
}
