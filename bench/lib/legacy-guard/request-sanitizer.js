// Frozen copy of the header guard as of commit 2bf0853 (transpiled from
// src/http/request-sanitizer.ts by tsc, module NodeNext, target ES2022; imports made local).
// Kept only so bench/ingress-modes.mjs (and bench/relay-floor.mjs) can compare
// the old guard with the new front in the same run, through
// STREAMGATE_GUARD_WORKER. Not part of streamgate: delete this folder once the
// A/B is recorded.
import { isUtf8 } from 'node:buffer';
import { errorEnvelope, ServiceError } from './errors.js';
import { statusLine } from './status-line.js';
/**
 * Marker headers the sanitizer adds for the application behind it. A client
 * cannot send them: every incoming line whose name starts with the prefix is
 * dropped before the head is passed on.
 */
export const GUARD_PREFIX = 'x-streamgate-guard-';
/** Comma-separated lower-case names whose values were re-encoded as base64url of their raw bytes. */
export const RAW_HEADERS_MARK = `${GUARD_PREFIX}raw`;
/** Present when a header line could not be passed on at all; its value says why. */
export const MALFORMED_MARK = `${GUARD_PREFIX}malformed`;
/** Framing and identity headers are never re-encoded: a bad byte in them makes the head malformed. */
const NEVER_ENCODED = new Set(['content-length', 'transfer-encoding', 'host', 'connection', 'expect', 'upgrade']);
const MAX_CHUNK_LINE = 4096;
// method SP request-target SP HTTP-version (RFC 9112 §3); the target has no spaces.
const REQUEST_LINE = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+ [^ ]+ HTTP\/1\.[01]$/;
/** Where reading goes once a counted stretch of bytes is through. */
const AFTER_COUNTED = { body: 'head', 'chunk-data': 'chunk-end', 'chunk-end': 'chunk-size' };
// tchar (RFC 9110 §5.6.2): what a header name may be made of.
const TCHAR = new Uint8Array(256);
for (const c of "!#$%&'*+-.^_`|~")
    TCHAR[c.charCodeAt(0)] = 1;
for (let c = 0x30; c <= 0x39; c++)
    TCHAR[c] = 1;
for (let c = 0x41; c <= 0x5a; c++)
    TCHAR[c] = 1;
for (let c = 0x61; c <= 0x7a; c++)
    TCHAR[c] = 1;
/** A complete HTTP response carrying the error envelope, closing the connection. */
function refusal(err) {
    const body = errorEnvelope(err);
    return Buffer.from(`HTTP/1.1 ${statusLine(err.status)}\r\ncontent-type: application/json\r\ncontent-length: ${Buffer.byteLength(body)}\r\nconnection: close\r\n\r\n${body}`);
}
/**
 * Reads the client→server byte stream of one HTTP/1.1 connection and passes it
 * on so that uWebSockets.js can parse every request and streamgate can answer
 * every one. The uWS build streamgate runs on (20.30) never answers a request
 * whose header line holds CR, LF, NUL or another control byte: it waits for the
 * idle timeout and closes. It also trims bytes ≥ 0x80 at either end of a header
 * value, so `café` arrives as `caf` and a trailing invalid byte vanishes.
 *
 * So each request head is checked here, byte by byte, before uWS sees it:
 * - a header value holding control bytes, a bare CR, or any byte ≥ 0x80 is sent
 *   on as base64url of its raw bytes and its name listed in RAW_HEADERS_MARK;
 *   the exchange decodes it back, and the ordinary header checks then answer
 *   with the reference's code (context_*_invalid, 401, invalid_header);
 * - a line that cannot be a header (no colon, bad name byte, obs-fold, bare LF
 *   line ending, a bad byte in a framing header) is dropped and MALFORMED_MARK
 *   added: the router answers 400 invalid_header and closes;
 * - a request line with control bytes, a head over `maxHeadBytes` or a body
 *   over `maxBodyBytes` cannot be
 *   passed on at all: `refuse` carries the answer.
 * Bodies are passed through untouched, framed by Content-Length or chunked
 * encoding, so the next request's head is found on keep-alive connections.
 * When framing is ambiguous, the rest of the connection passes through as is:
 * the application refuses such a request and closes the connection.
 */
export class RequestSanitizer {
    maxHeadBytes;
    limits;
    state = 'head';
    pending = [];
    pendingBytes = 0;
    remaining = 0;
    lineLength = 0;
    /** Chunk data seen so far in the current chunked body. */
    bodyBytes = 0;
    /** The body limit of the request being read (see `limits`). */
    maxBodyBytes = Number.MAX_SAFE_INTEGER;
    /**
     * `limits`: the body limits of ingress (`/events/…`) and of every other
     * route. A larger body is refused here (413) rather than streamed to uWS,
     * which would answer early and close while the client is still sending: the
     * reset that follows can destroy the answer before the client reads it.
     */
    constructor(maxHeadBytes, limits = { events: Number.MAX_SAFE_INTEGER, other: Number.MAX_SAFE_INTEGER }) {
        this.maxHeadBytes = maxHeadBytes;
        this.limits = limits;
    }
    push(chunk) {
        const out = { forward: [], refuse: null };
        let at = 0;
        while (at < chunk.length && out.refuse === null) {
            switch (this.state) {
                case 'closed':
                    return out;
                case 'passthrough':
                    out.forward.push(at === 0 ? chunk : chunk.subarray(at));
                    return out;
                case 'body':
                case 'chunk-data':
                case 'chunk-end': {
                    // Counted bytes, passed on as they are: a body, a chunk's data, the CRLF after it.
                    const take = Math.min(this.remaining, chunk.length - at);
                    out.forward.push(chunk.subarray(at, at + take));
                    at += take;
                    this.remaining -= take;
                    if (this.remaining === 0) {
                        this.state = AFTER_COUNTED[this.state];
                        if (this.state === 'chunk-end')
                            this.remaining = 2;
                    }
                    break;
                }
                default:
                    at = this.line(chunk, at, out);
            }
        }
        return out;
    }
    /** Accumulates a head, a chunk-size line or trailers up to their end; returns where it stopped. */
    line(chunk, at, out) {
        const chunkLine = this.state === 'chunk-size';
        let end;
        if (chunkLine) {
            const lf = chunk.indexOf(0x0a, at);
            end = lf === -1 ? -1 : lf + 1;
        }
        else {
            end = this.findEmptyLine(chunk, at);
        }
        const stop = end === -1 ? chunk.length : end;
        this.pending.push(at === 0 && stop === chunk.length ? chunk : chunk.subarray(at, stop));
        this.pendingBytes += stop - at;
        if (end === -1) {
            if (this.pendingBytes > (chunkLine ? MAX_CHUNK_LINE : this.maxHeadBytes))
                this.tooLarge(out);
            return stop;
        }
        const buffered = this.pending.length === 1 ? this.pending[0] : Buffer.concat(this.pending, this.pendingBytes);
        this.reset();
        if (chunkLine) {
            this.chunkSize(buffered, out);
            if (out.refuse === null)
                out.forward.push(buffered);
        }
        else if (this.state === 'trailers') {
            out.forward.push(buffered);
            this.state = 'head';
        }
        else if (!onlyLineBreaks(buffered)) {
            this.head(buffered, out);
        }
        // (Empty lines before a request line are ignored: RFC 9112 §2.2.)
        return stop;
    }
    /** Index just past the LF that ends an empty line, or -1; remembers the current line's length across chunks. */
    findEmptyLine(chunk, at) {
        for (let p = at; p < chunk.length; p++) {
            const c = chunk[p];
            if (c === 0x0a) {
                if (this.lineLength === 0)
                    return p + 1;
                this.lineLength = 0;
            }
            else if (c !== 0x0d) {
                this.lineLength++;
            }
        }
        return -1;
    }
    reset() {
        this.pending = [];
        this.pendingBytes = 0;
        this.lineLength = 0;
    }
    tooLarge(out) {
        this.state = 'closed';
        out.refuse = refusal(new ServiceError('header_too_large', `The request head is over the limit of ${this.maxHeadBytes} bytes.`));
    }
    bodyTooLarge(out) {
        this.state = 'closed';
        out.refuse = refusal(new ServiceError('payload_too_large', `The body is over the limit of ${this.maxBodyBytes} bytes.`));
    }
    chunkSize(line, out) {
        const text = line.toString('latin1');
        const match = /^([0-9a-fA-F]{1,8})(?:[ \t]*;[^\r\n]*)?\r\n$/.exec(text);
        if (!match) {
            // uWS would wait for the idle timeout here too: answer, and close.
            this.state = 'closed';
            out.refuse = refusal(new ServiceError('bad_request', 'The chunked body has a malformed chunk-size line.'));
            return;
        }
        const size = parseInt(match[1], 16);
        this.bodyBytes += size;
        if (this.bodyBytes > this.maxBodyBytes) {
            this.bodyTooLarge(out);
            return;
        }
        if (size === 0)
            this.state = 'trailers';
        else {
            this.state = 'chunk-data';
            this.remaining = size;
        }
    }
    head(head, out) {
        const lines = splitLines(head);
        const requestLine = lines[0];
        if (!requestLine.crlf || hasControl(head, requestLine.start, requestLine.end) || !REQUEST_LINE.test(head.toString('latin1', requestLine.start, requestLine.end))) {
            this.state = 'closed';
            out.refuse = refusal(new ServiceError('bad_request', 'The request line is not `METHOD target HTTP/1.x` (or holds control characters).'));
            return;
        }
        // The route family's body limit: the target is the request line's second word.
        const targetStart = head.indexOf(0x20, requestLine.start) + 1;
        this.maxBodyBytes = head.toString('latin1', targetStart, targetStart + 8) === '/events/' ? this.limits.events : this.limits.other;
        if (this.clean(head, lines, out)) {
            // The usual case: nothing to change, the head goes on as it came.
            if (out.refuse === null)
                out.forward.push(head);
            return;
        }
        this.rewrite(head, lines, out);
    }
    /**
     * True when every header line is one uWS takes byte for byte: then the
     * framing is read off it (no strings made for names that are not framing).
     */
    clean(head, lines, out) {
        if (!lines[lines.length - 1].crlf)
            return false;
        const framing = new Framing();
        for (let i = 1; i < lines.length - 1; i++) {
            const line = lines[i];
            const colon = nameEnd(head, line);
            if (!line.crlf || colon === -1)
                return false;
            if (needsEncoding(head, colon + 1, line.end) || startsWithLower(head, line.start, colon, GUARD_PREFIX))
                return false;
            framing.read(head, line.start, colon, line.end);
        }
        this.frame(framing, false, out);
        return true;
    }
    /** Passes the head on with odd values re-encoded, bad lines dropped and the marks added. */
    rewrite(head, lines, out) {
        let malformed = null;
        const raw = new Set();
        const fields = [];
        for (let i = 1; i < lines.length - 1; i++) {
            const line = lines[i];
            const colon = nameEnd(head, line);
            if (colon === -1) {
                malformed ??= head[line.start] === 0x20 || head[line.start] === 0x09 ? 'obs-fold' : 'header line without a valid name';
                continue;
            }
            const name = head.toString('latin1', line.start, colon).toLowerCase();
            if (name.startsWith(GUARD_PREFIX))
                continue;
            if (!line.crlf) {
                malformed ??= `${name}: line ends in a bare LF`;
                continue;
            }
            if (needsEncoding(head, colon + 1, line.end)) {
                if (NEVER_ENCODED.has(name)) {
                    malformed ??= `${name}: holds bytes that are not allowed`;
                    continue;
                }
                raw.add(name);
            }
            fields.push({ name, start: line.start, end: line.end, colon });
        }
        if (!lines[lines.length - 1].crlf)
            malformed ??= 'the head ends in a bare LF';
        const requestLine = lines[0];
        const parts = [head.toString('latin1', requestLine.start, requestLine.end), '\r\n'];
        const framing = new Framing();
        for (const field of fields) {
            if (raw.has(field.name)) {
                const value = trimOws(head, field.colon + 1, field.end);
                parts.push(field.name, ': ', head.subarray(value[0], value[1]).toString('base64url'), '\r\n');
                continue;
            }
            parts.push(head.toString('latin1', field.start, field.end), '\r\n');
            framing.read(head, field.start, field.colon, field.end);
        }
        if (raw.size > 0)
            parts.push(RAW_HEADERS_MARK, ': ', [...raw].join(','), '\r\n');
        if (malformed !== null)
            parts.push(MALFORMED_MARK, ': ', encodeURIComponent(malformed), '\r\n');
        parts.push('\r\n');
        // Header names and values here are ASCII (the rest was base64url-encoded): latin1 is byte for byte.
        this.frame(framing, malformed !== null, out);
        if (out.refuse === null)
            out.forward.push(Buffer.from(parts.join(''), 'latin1'));
    }
    /** Where the next head starts: after a Content-Length body, after chunks, or never (pass through). */
    frame({ contentLength, transferEncoding }, malformed, out) {
        const chunked = transferEncoding !== null && /(?:^|,)[ \t]*chunked[ \t]*$/i.test(transferEncoding);
        if (malformed || (transferEncoding !== null && (contentLength !== null || !chunked))) {
            // The application refuses this request and closes: what follows is not ours to frame.
            this.state = 'passthrough';
        }
        else if (chunked) {
            this.state = 'chunk-size';
            this.bodyBytes = 0;
        }
        else if (contentLength !== null) {
            if (!/^\d{1,15}$/.test(contentLength))
                this.state = 'passthrough';
            else if (Number(contentLength) > this.maxBodyBytes)
                this.bodyTooLarge(out);
            else {
                this.remaining = Number(contentLength);
                this.state = this.remaining > 0 ? 'body' : 'head';
            }
        }
        else {
            this.state = 'head';
        }
    }
}
/** Content-Length and Transfer-Encoding as a head states them (values as sent, several Content-Length compared). */
class Framing {
    contentLength = null;
    transferEncoding = null;
    /** Takes one header line whose name ends at `colon`; only the two framing names are read. */
    read(head, start, colon, end) {
        if (nameIs(head, start, colon, 'content-length')) {
            const value = head.toString('latin1', colon + 1, end).trim();
            this.contentLength = this.contentLength === null || this.contentLength === value ? value : 'conflict';
        }
        else if (nameIs(head, start, colon, 'transfer-encoding')) {
            this.transferEncoding = head.toString('latin1', colon + 1, end);
        }
    }
}
/** The colon ending a valid header name (tchar only, not empty) on the line, or -1. */
function nameEnd(head, line) {
    const colon = head.indexOf(0x3a, line.start);
    if (colon <= line.start || colon >= line.end)
        return -1;
    for (let p = line.start; p < colon; p++)
        if (!TCHAR[head[p]])
            return -1;
    return colon;
}
function splitLines(head) {
    const lines = [];
    let start = 0;
    for (;;) {
        const lf = head.indexOf(0x0a, start);
        if (lf === -1)
            break;
        const crlf = lf > start && head[lf - 1] === 0x0d;
        lines.push({ start, end: crlf ? lf - 1 : lf, crlf });
        start = lf + 1;
    }
    return lines;
}
/** The header name at [start, end) equals `lower` (ASCII, case-insensitive). */
function nameIs(buf, start, end, lower) {
    return end - start === lower.length && startsWithLower(buf, start, end, lower);
}
function startsWithLower(buf, start, end, lower) {
    if (end - start < lower.length)
        return false;
    for (let i = 0; i < lower.length; i++)
        if ((buf[start + i] | 0x20) !== lower.charCodeAt(i))
            return false;
    return true;
}
function onlyLineBreaks(buf) {
    for (const c of buf)
        if (c !== 0x0a && c !== 0x0d)
            return false;
    return true;
}
function hasControl(buf, start, end) {
    for (let p = start; p < end; p++) {
        const c = buf[p];
        if (c < 0x20 || c === 0x7f)
            return true;
    }
    return false;
}
/** A value uWS would not pass on byte for byte: controls (HTAB aside), DEL, or any byte ≥ 0x80. */
function needsEncoding(buf, start, end) {
    for (let p = start; p < end; p++) {
        const c = buf[p];
        if ((c < 0x20 && c !== 0x09) || c >= 0x7f)
            return true;
    }
    return false;
}
function trimOws(buf, start, end) {
    while (start < end && (buf[start] === 0x20 || buf[start] === 0x09))
        start++;
    while (end > start && (buf[end - 1] === 0x20 || buf[end - 1] === 0x09))
        end--;
    return [start, end];
}
/** Decodes a value the sanitizer re-encoded: invalid UTF-8 becomes U+FFFD, which the header checks refuse. */
export function decodeRawValue(encoded) {
    return encoded
        .split(', ')
        .map((part) => {
        const bytes = Buffer.from(part, 'base64url');
        return isUtf8(bytes) ? bytes.toString('utf8') : new TextDecoder('utf-8', { fatal: false }).decode(bytes);
    })
        .join(', ');
}
