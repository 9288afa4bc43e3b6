import { STATUS_CODES } from 'node:http';

const statusLines = new Map<number, string>();

/** "404 Not Found" for 404: the status line's text after the version, built once per status. */
export function statusLine(status: number): string {
  let line = statusLines.get(status);
  if (!line) {
    line = `${status} ${STATUS_CODES[status] ?? 'Status'}`;
    statusLines.set(status, line);
  }
  return line;
}
