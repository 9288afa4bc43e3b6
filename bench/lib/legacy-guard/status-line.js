// Frozen copy of the header guard as of commit 2bf0853 (transpiled from
// src/http/status-line.ts by tsc, module NodeNext, target ES2022; imports made local).
// Kept only so bench/ingress-modes.mjs (and bench/relay-floor.mjs) can compare
// the old guard with the new front in the same run, through
// STREAMGATE_GUARD_WORKER. Not part of streamgate: delete this folder once the
// A/B is recorded.
import { STATUS_CODES } from 'node:http';
const statusLines = new Map();
/** "404 Not Found" for 404: the status line's text after the version, built once per status. */
export function statusLine(status) {
    let line = statusLines.get(status);
    if (!line) {
        line = `${status} ${STATUS_CODES[status] ?? 'Status'}`;
        statusLines.set(status, line);
    }
    return line;
}
