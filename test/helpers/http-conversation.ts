import net from 'node:net';

/**
 * Raw HTTP/1.1 conversations for the front's tests: bytes written exactly as
 * given (in pieces, with gaps, or gated on what the server has answered so
 * far), everything the server sends read back and parsed into responses, and
 * how the connection ended (FIN, reset, or still open when we gave up).
 *
 * Strings are written as latin1, so every byte 0x00–0xff can be spelled in a
 * template literal (`\0`, `\x80`, a PROXY v2 header...).
 */

/** One step of a conversation. */
export type Step =
  | string
  | Buffer
  /** Wait this long before the next step. */
  | { pause: number }
  /** Wait until what the server sent so far satisfies `until` (fails the conversation after the timeout). */
  | { until: (received: Buffer) => boolean; what: string };

export interface HttpResponse {
  status: number;
  /** The status line without its CRLF. */
  statusLine: string;
  headers: Array<[string, string]>;
  body: Buffer;
  /** `error.code` of the JSON error envelope, when the body is one. */
  code: string | null;
  /** `error.message` of the envelope, when the body is one. */
  message: string | null;
}

export interface ParsedStream {
  responses: HttpResponse[];
  /** Bytes after the last complete response (an incomplete or malformed one). */
  leftover: Buffer;
  /** Why parsing stopped before the end of the bytes, or null. */
  error: string | null;
}

export type Ending =
  /** The server sent FIN (after everything it had to say). */
  | 'closed'
  /** The connection was reset (ECONNRESET, EPIPE...): answers may have been lost. */
  | 'reset'
  /** Still open when the conversation stopped waiting (stopAfter reached, or timeout). */
  | 'open';

export interface Conversation {
  raw: Buffer;
  parsed: ParsedStream;
  responses: HttpResponse[];
  ending: Ending;
  /** The conversation hit its timeout (the server neither closed nor said what was expected). */
  timedOut: boolean;
  /** A gated step whose condition never held, or null. */
  stuckAt: string | null;
  elapsedMs: number;
}

export interface ConverseOptions {
  /** Half-close (FIN) after the last step; default true. */
  halfClose?: boolean;
  /** Gives up (ending 'open', timedOut) after this long; default 5000 ms. */
  timeoutMs?: number;
  /** Milliseconds between consecutive byte steps (a number, or a function per gap); default 0 (back to back). */
  gapMs?: number | (() => number);
  /** Stop once this many final (non-1xx) responses are complete, after `graceMs` more for anything extra. */
  stopAfter?: number;
  graceMs?: number;
  /** Indices (among final responses) of answers to HEAD requests: they have no body. */
  headResponses?: readonly number[];
  host?: string;
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export function bytes(step: string | Buffer): Buffer {
  return Buffer.isBuffer(step) ? step : Buffer.from(step, 'latin1');
}

/** Opens a connection, plays the steps, and reads until the server closes (or the options say stop). */
export function converse(port: number, steps: readonly Step[] | Step, options: ConverseOptions = {}): Promise<Conversation> {
  const list: readonly Step[] = Array.isArray(steps) ? steps : [steps as Step];
  const halfClose = options.halfClose ?? true;
  const timeoutMs = options.timeoutMs ?? 5_000;
  const graceMs = options.graceMs ?? 100;
  const heads = new Set(options.headResponses ?? []);
  const started = Date.now();
  return new Promise((resolve) => {
    const socket = net.connect(port, options.host ?? '127.0.0.1');
    socket.setNoDelay(true);
    const chunks: Buffer[] = [];
    let received = Buffer.alloc(0);
    let ending: Ending = 'open';
    let timedOut = false;
    let stuckAt: string | null = null;
    let done = false;
    let graceTimer: NodeJS.Timeout | null = null;
    const wakers: Array<() => void> = [];
    const wake = () => {
      for (const w of wakers.splice(0)) w();
    };
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      if (graceTimer) clearTimeout(graceTimer);
      socket.destroy();
      wake();
      const raw = Buffer.concat(chunks);
      const parsed = parseResponses(raw, heads);
      resolve({ raw, parsed, responses: parsed.responses, ending, timedOut, stuckAt, elapsedMs: Date.now() - started });
    };
    const timer = setTimeout(() => {
      timedOut = true;
      finish();
    }, timeoutMs);
    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      received = Buffer.concat(chunks);
      wake();
      if (options.stopAfter !== undefined && graceTimer === null) {
        const finals = parseResponses(received, heads).responses.filter((r) => r.status >= 200).length;
        if (finals >= options.stopAfter) graceTimer = setTimeout(finish, graceMs);
      }
    });
    socket.on('end', () => {
      ending = 'closed';
      finish();
    });
    socket.on('error', () => {
      ending = 'reset';
      finish();
    });
    socket.on('close', finish);
    socket.on('connect', () => {
      void (async () => {
        let wroteBefore = false;
        for (const step of list) {
          if (done) return;
          if (typeof step === 'string' || Buffer.isBuffer(step)) {
            const gap = typeof options.gapMs === 'function' ? options.gapMs() : (options.gapMs ?? 0);
            if (wroteBefore && gap > 0) await sleep(gap);
            if (done) return;
            socket.write(bytes(step));
            wroteBefore = true;
          } else if ('pause' in step) {
            await sleep(step.pause);
          } else {
            while (!done && !step.until(received)) await new Promise<void>((r) => wakers.push(r));
            if (done) {
              stuckAt = step.what;
              return;
            }
          }
        }
        if (halfClose && !done) socket.end();
      })();
    });
  });
}

const STATUS_LINE = /^HTTP\/1\.1 (\d{3}) ([\t\x20-\x7e\x80-\xff]*)$/;

/**
 * Parses a stream of HTTP/1.1 responses. Bodies are framed by the rules a
 * client applies (RFC 9112 §6.3): none for 1xx, 204, 304 and HEAD; chunked;
 * Content-Length; otherwise until the end of the stream.
 */
export function parseResponses(raw: Buffer, headResponses: ReadonlySet<number> = new Set()): ParsedStream {
  const responses: HttpResponse[] = [];
  let at = 0;
  let finals = 0;
  const stop = (error: string | null): ParsedStream => ({ responses, leftover: raw.subarray(at), error });
  while (at < raw.length) {
    const end = raw.indexOf('\r\n\r\n', at, 'latin1');
    if (end < 0) return stop('incomplete response head');
    const lines = raw.subarray(at, end).toString('latin1').split('\r\n');
    const statusLine = lines[0]!;
    const m = STATUS_LINE.exec(statusLine);
    if (!m) return stop(`malformed status line ${JSON.stringify(statusLine)}`);
    const status = Number(m[1]);
    const headers: Array<[string, string]> = [];
    for (const line of lines.slice(1)) {
      const colon = line.indexOf(':');
      if (colon <= 0 || !/^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/.test(line.slice(0, colon))) return stop(`malformed response header line ${JSON.stringify(line)}`);
      headers.push([line.slice(0, colon).toLowerCase(), line.slice(colon + 1).trim()]);
    }
    const get = (name: string) => headers.filter(([n]) => n === name).map(([, v]) => v);
    let bodyStart = end + 4;
    let body: Buffer = Buffer.alloc(0);
    const isFinal = status >= 200;
    const noBody = status < 200 || status === 204 || status === 304 || (isFinal && headResponses.has(finals));
    if (!noBody) {
      const te = get('transfer-encoding');
      const cl = get('content-length');
      if (te.length > 0) {
        if (!/(^|,)\s*chunked\s*$/i.test(te.join(','))) return stop(`response transfer-encoding ${te.join(',')}`);
        const parts: Buffer[] = [];
        let p = bodyStart;
        for (;;) {
          const lineEnd = raw.indexOf('\r\n', p, 'latin1');
          if (lineEnd < 0) return stop('incomplete chunked response body');
          const size = parseInt(raw.subarray(p, lineEnd).toString('latin1').split(';')[0]!.trim(), 16);
          if (!Number.isFinite(size)) return stop('malformed response chunk size');
          p = lineEnd + 2;
          if (size === 0) {
            const trailersEnd = raw.indexOf('\r\n\r\n', p - 2, 'latin1');
            if (trailersEnd < 0) return stop('incomplete response trailers');
            p = trailersEnd + 4;
            break;
          }
          if (raw.length < p + size + 2) return stop('incomplete chunked response body');
          parts.push(raw.subarray(p, p + size));
          p += size + 2;
        }
        body = Buffer.concat(parts);
        bodyStart = p;
      } else if (cl.length > 0) {
        if (cl.length > 1 || !/^\d+$/.test(cl[0]!)) return stop(`response content-length ${cl.join(',')}`);
        const n = Number(cl[0]);
        if (raw.length < bodyStart + n) return stop('incomplete response body');
        body = raw.subarray(bodyStart, bodyStart + n);
        bodyStart += n;
      } else {
        body = raw.subarray(bodyStart);
        bodyStart = raw.length;
      }
    }
    let code: string | null = null;
    let message: string | null = null;
    if (status >= 400 && body.length > 0) {
      try {
        const parsed = JSON.parse(body.toString('utf8')) as { error?: { code?: unknown; message?: unknown } };
        if (typeof parsed.error?.code === 'string') code = parsed.error.code;
        if (typeof parsed.error?.message === 'string') message = parsed.error.message;
      } catch {
        // not the envelope: code stays null
      }
    }
    responses.push({ status, statusLine, headers, body, code, message });
    if (isFinal) finals++;
    at = bodyStart;
  }
  return stop(null);
}

/**
 * `202`, `200`, `100`, or `400 bad_request` (status and, for errors, the
 * envelope's code); an error without a body (an answer to HEAD) is its status alone.
 */
export function describe(r: HttpResponse): string {
  if (r.status < 400 || r.body.length === 0) return String(r.status);
  return `${r.status} ${r.code ?? '<no envelope>'}`;
}

/** A 5xx the front may send: 503 unavailable, and the refusals 501 not_implemented and 505 http_version_not_supported. */
export function allowedServerError(r: HttpResponse): boolean {
  return (r.status === 503 && r.code === 'unavailable') || (r.status === 501 && r.code === 'not_implemented') || (r.status === 505 && r.code === 'http_version_not_supported');
}

export function header(r: HttpResponse, name: string): string | undefined {
  return r.headers.find(([n]) => n === name.toLowerCase())?.[1];
}

/** A readable account of a conversation for failure messages: what was sent, what came back. */
export function transcript(sent: readonly Step[] | Step, c: Conversation): string {
  const list: readonly Step[] = Array.isArray(sent) ? sent : [sent as Step];
  const out = list.map((s) => (typeof s === 'string' || Buffer.isBuffer(s) ? JSON.stringify(bytes(s).toString('latin1')) : 'pause' in s ? `<pause ${s.pause}>` : `<until ${s.what}>`));
  return `sent: ${out.join(' + ')}\nreceived (${c.ending}${c.timedOut ? ', timed out' : ''}${c.stuckAt ? `, stuck at ${c.stuckAt}` : ''}): ${JSON.stringify(c.raw.toString('latin1'))}${c.parsed.error ? `\nparse error: ${c.parsed.error}` : ''}`;
}

/** A PROXY protocol v2 header (binary) naming an IPv4 source, as a load balancer would send it. */
export function proxyV2(source: string, destination = '127.0.0.1', sourcePort = 40_000, destinationPort = 8080): Buffer {
  const buf = Buffer.alloc(28);
  Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]).copy(buf);
  buf[12] = 0x21; // version 2, PROXY
  buf[13] = 0x11; // TCP over IPv4
  buf.writeUInt16BE(12, 14);
  source.split('.').forEach((o, i) => (buf[16 + i] = Number(o)));
  destination.split('.').forEach((o, i) => (buf[20 + i] = Number(o)));
  buf.writeUInt16BE(sourcePort, 24);
  buf.writeUInt16BE(destinationPort, 26);
  return buf;
}

/** The LOCAL form of the PROXY v2 header (no address). */
export function proxyV2Local(): Buffer {
  const buf = Buffer.alloc(16);
  Buffer.from([0x0d, 0x0a, 0x0d, 0x0a, 0x00, 0x0d, 0x0a, 0x51, 0x55, 0x49, 0x54, 0x0a]).copy(buf);
  buf[12] = 0x20;
  return buf;
}

/** A PROXY protocol v1 line naming an IPv4 source. */
export function proxyV1(source: string, destination = '127.0.0.1'): string {
  return `PROXY TCP4 ${source} ${destination} 40000 8080\r\n`;
}

/** One chunk of a chunked body: size in hex, CRLF, the data, CRLF. */
export function chunk(data: string, sizeLine?: string): string {
  return `${sizeLine ?? Buffer.byteLength(data, 'latin1').toString(16)}\r\n${data}\r\n`;
}

/** Runs `work` over `items` with at most `limit` in flight; results in input order. */
export async function pool<T, R>(items: readonly T[], limit: number, work: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const runners = Array.from({ length: Math.min(limit, items.length) }, async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await work(items[i]!, i);
    }
  });
  await Promise.all(runners);
  return out;
}
