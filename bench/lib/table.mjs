/** Number formats and a padded Markdown table, readable as plain text too. */
export const int = (n) => (n === null || n === undefined ? '–' : Math.round(n).toLocaleString('en-US'));
// autocannon records latency in whole milliseconds; 0 means under 1 ms.
export const ms = (n) => (n === null || n === undefined ? '–' : n === 0 ? '<1' : String(Math.round(n * 100) / 100));
// A tail of -0.001 s only means the last delivery beat the load-end timestamp.
export const secs = (n) => (n === null || n === undefined ? '–' : `${Math.max(0, n).toFixed(2)} s`);
export const pct = (ratio) => (ratio === null || ratio === undefined || !Number.isFinite(ratio) ? '–' : `${(ratio * 100).toFixed(1)} %`);

export function table(head, rows) {
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => String(r[i]).length)));
  const line = (cells) => `| ${cells.map((c, i) => String(c).padEnd(widths[i])).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}
