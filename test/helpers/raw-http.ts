import net from 'node:net';

export interface RawResponse {
  /** null when the server closed or stayed silent without answering (its HTTP parser refused the bytes). */
  status: number | null;
  body: string;
  raw: string;
}

/**
 * Sends bytes as they are, for what fetch refuses to send (CR, LF or NUL in a
 * header, bytes that are not UTF-8, malformed request lines). Reads one
 * response; gives up after `timeoutMs` of silence.
 */
export function rawRequest(port: number, bytes: Buffer, timeoutMs = 1500): Promise<RawResponse> {
  return new Promise((resolve) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      socket.destroy();
      const raw = Buffer.concat(chunks).toString('latin1');
      const m = /^HTTP\/1\.1 (\d{3})/.exec(raw);
      const split = raw.indexOf('\r\n\r\n');
      resolve({ status: m ? Number(m[1]) : null, body: split >= 0 ? raw.slice(split + 4) : '', raw });
    };
    const timer = setTimeout(finish, timeoutMs);
    socket.on('connect', () => socket.write(bytes));
    socket.on('data', (d: Buffer) => {
      chunks.push(d);
      const raw = Buffer.concat(chunks).toString('latin1');
      const split = raw.indexOf('\r\n\r\n');
      if (split < 0) return;
      const length = /\r\ncontent-length: *(\d+)/i.exec(raw.slice(0, split));
      if (length && raw.length - split - 4 >= Number(length[1])) finish();
    });
    socket.on('error', finish);
    socket.on('close', finish);
  });
}

/** A request as raw bytes: the request line, headers as given (no checks), and the body. */
export function rawPost(target: string, headers: Array<[string, string | Buffer]>, body: Buffer): Buffer {
  const parts: Buffer[] = [Buffer.from(`POST ${target} HTTP/1.1\r\nhost: 127.0.0.1\r\ncontent-length: ${body.length}\r\n`, 'utf8')];
  for (const [name, value] of headers) parts.push(Buffer.from(`${name}: `, 'latin1'), Buffer.isBuffer(value) ? value : Buffer.from(value, 'utf8'), Buffer.from('\r\n'));
  parts.push(Buffer.from('connection: close\r\n\r\n'), body);
  return Buffer.concat(parts);
}
