/**
 * How the event page shows a body: JSON pretty-printed, other UTF-8 text as
 * it is, anything else (invalid UTF-8, control bytes) as a hex dump of at most
 * `maxBytes` bytes. Pure, so it is unit-tested outside the browser.
 */
export function bodyPreview(bytes: Uint8Array, maxBytes = 4096): { kind: 'json' | 'text' | 'hex'; text: string } {
  let text: string | null = null;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    text = null;
  }
  if (text !== null) {
    try {
      return { kind: 'json', text: JSON.stringify(JSON.parse(text), null, 2) };
    } catch {
      // Text that is not JSON: shown as it is unless it holds control bytes (a binary format).
      if (!/[\u0000-\u0008\u000e-\u001f\u007f]/.test(text)) return { kind: 'text', text };
    }
  }
  const lines: string[] = [];
  for (let i = 0; i < Math.min(bytes.length, maxBytes); i += 16) {
    const row = Array.from(bytes.slice(i, Math.min(i + 16, maxBytes)));
    lines.push(`${i.toString(16).padStart(6, '0')}  ${row.map((b) => b.toString(16).padStart(2, '0')).join(' ')}`);
  }
  if (bytes.length > maxBytes) lines.push(`… ${bytes.length - maxBytes} more bytes`);
  return { kind: 'hex', text: lines.join('\n') };
}
