import { statusLine } from './status-line.js';

/** Response fields by name; an array sends the field once per value (Set-Cookie). */
export type ResponseHeaders = Readonly<Record<string, string | readonly string[]>>;

/**
 * The Date field (RFC 9110 §6.6.1: an origin server with a clock sends it),
 * made once a second rather than once per answer.
 */
let dateSecond = 0;
let dateText = '';
function httpDate(): string {
  const now = Date.now();
  const second = Math.floor(now / 1000);
  if (second !== dateSecond) {
    dateSecond = second;
    dateText = new Date(second * 1000).toUTCString();
  }
  return dateText;
}

/** Field names and values the server writes must not carry CR or LF (response splitting). */
const LINE_BREAK = /[\r\n]/;

/**
 * The response head: status line, X-Request-Id, the handler's fields, Date,
 * Content-Length (always: every answer is framed by length, never by close)
 * and `connection: close` when the connection ends after it.
 */
export function responseHead(status: number, requestId: string, extra: ResponseHeaders | undefined, contentLength: number, close: boolean): string {
  let head = `HTTP/1.1 ${statusLine(status)}\r\nx-request-id: ${requestId}\r\n`;
  if (extra) head += fieldLines(extra);
  head += `date: ${httpDate()}\r\ncontent-length: ${contentLength}\r\n`;
  if (close) head += 'connection: close\r\n';
  return `${head}\r\n`;
}

/**
 * The lines of a handler's fields. A frozen set of strings (a route's constant,
 * such as ingress's content-type) is checked and rendered once: it cannot change after.
 */
const rendered = new WeakMap<ResponseHeaders, string>();
function fieldLines(extra: ResponseHeaders): string {
  const known = rendered.get(extra);
  if (known !== undefined) return known;
  let lines = '';
  let constant = Object.isFrozen(extra);
  for (const name in extra) {
    const value = extra[name]!;
    if (typeof value === 'string') lines += field(name, value);
    else {
      // An array inside a frozen set can still change.
      constant = false;
      for (const one of value) lines += field(name, one);
    }
  }
  if (constant) rendered.set(extra, lines);
  return lines;
}

function field(name: string, value: string): string {
  // Values come from our own code and stored settings; a line break here is a bug, not a header.
  if (LINE_BREAK.test(name) || LINE_BREAK.test(value)) throw new Error(`response field ${JSON.stringify(name)} holds a line break`);
  return `${name}: ${value}\r\n`;
}
