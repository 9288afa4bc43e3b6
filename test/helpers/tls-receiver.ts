import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import tls from 'node:tls';
import type { Test } from 'tap';

export interface KeyPair {
  key: string;
  cert: string;
}

/** A throwaway PKI made with openssl for one test file; nothing of it is committed. */
export interface TestPki {
  dir: string;
  /** PEM file of the test CA (what delivery.tls.caFile names). */
  caFile: string;
  /** For localhost and 127.0.0.1, signed by the test CA. */
  valid: KeyPair;
  /** For localhost and 127.0.0.1, self-signed: no configured CA vouches for it. */
  untrusted: KeyPair;
  /** Signed by the test CA, but its notAfter has passed. */
  expired: KeyPair;
  /** Signed by the test CA, for wrong.example only. */
  wrongHost: KeyPair;
}

const CONFIG = `[req]
distinguished_name = dn
prompt = no
[dn]
CN = streamgate test
[ca_ext]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[leaf_ext]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:localhost,IP:127.0.0.1
[wrong_ext]
basicConstraints = CA:FALSE
keyUsage = critical,digitalSignature
extendedKeyUsage = serverAuth
subjectAltName = DNS:wrong.example
`;

export function makeTestPki(t: Test): TestPki {
  const dir = mkdtempSync(join(tmpdir(), 'streamgate-pki-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const cnf = join(dir, 'openssl.cnf');
  writeFileSync(cnf, CONFIG);
  const ssl = (...args: string[]) => execFileSync('openssl', args, { cwd: dir, stdio: ['ignore', 'ignore', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  ssl('req', '-x509', '-config', cnf, '-extensions', 'ca_ext', ...ec, '-keyout', 'ca.key', '-out', 'ca.pem', '-days', '30', '-subj', '/CN=streamgate test CA');
  let serial = 1;
  const leaf = (name: string, ext: string, days: string): KeyPair => {
    ssl('req', '-new', '-config', cnf, ...ec, '-keyout', `${name}.key`, '-out', `${name}.csr`, '-subj', '/CN=localhost');
    // -days -1: notAfter a day before notBefore (now), so the certificate has expired (OpenSSL 3 x509 has no -not_after).
    ssl('x509', '-req', '-in', `${name}.csr`, '-CA', 'ca.pem', '-CAkey', 'ca.key', '-set_serial', String(++serial), '-days', days,
      '-extfile', cnf, '-extensions', ext, '-out', `${name}.pem`);
    return { key: readFileSync(join(dir, `${name}.key`), 'utf8'), cert: readFileSync(join(dir, `${name}.pem`), 'utf8') };
  };
  const valid = leaf('valid', 'leaf_ext', '30');
  const expired = leaf('expired', 'leaf_ext', '-1');
  const wrongHost = leaf('wrong', 'wrong_ext', '30');
  ssl('req', '-x509', '-config', cnf, '-extensions', 'leaf_ext', ...ec, '-keyout', 'self.key', '-out', 'self.pem', '-days', '30', '-subj', '/CN=localhost');
  const untrusted = { key: readFileSync(join(dir, 'self.key'), 'utf8'), cert: readFileSync(join(dir, 'self.pem'), 'utf8') };
  return { dir, caFile: join(dir, 'ca.pem'), valid, untrusted, expired, wrongHost };
}

/** An https: receiver (node:https) that counts TLS connections and records request bodies. */
export async function startHttpsReceiver(t: Test, pair: KeyPair, handler?: (body: Buffer, res: import('node:http').ServerResponse) => void) {
  const bodies: Buffer[] = [];
  let connections = 0;
  const server = https.createServer({ key: pair.key, cert: pair.cert }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      bodies.push(body);
      if (handler) handler(body, res);
      else res.end('ok');
    });
  });
  server.on('secureConnection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => {
    server.closeAllConnections();
    server.close(() => r());
  }));
  const port = (server.address() as AddressInfo).port;
  return { port, url: `https://127.0.0.1:${port}`, bodies, connections: () => connections, server };
}

/**
 * A TLS receiver speaking HTTP/1.1 by hand, for what node:https will not do:
 * `answer` gets the request's bytes and the number of requests the connection
 * carried before it, and returns the raw answer, or null to close the
 * connection without one. `closeIdleAfterMs` closes a connection that long
 * after its last answer (no Keep-Alive hint is sent unless `answer` writes one).
 */
export async function startRawTlsReceiver(
  t: Test,
  pair: KeyPair,
  answer: (request: string, earlier: number) => string | null,
  closeIdleAfterMs = 0,
) {
  let connections = 0;
  let requests = 0;
  const open = new Set<tls.TLSSocket>();
  const server = tls.createServer({ key: pair.key, cert: pair.cert }, (socket) => {
    connections++;
    open.add(socket);
    socket.on('close', () => open.delete(socket));
    let seen = '';
    let earlier = 0;
    let idle: NodeJS.Timeout | null = null;
    socket.on('error', () => {});
    socket.on('close', () => idle && clearTimeout(idle));
    socket.on('data', (d: Buffer) => {
      if (idle) clearTimeout(idle);
      seen += d.toString('latin1');
      const end = seen.indexOf('\r\n\r\n');
      if (end === -1) return;
      const length = Number(/content-length: (\d+)/i.exec(seen)?.[1] ?? 0);
      if (seen.length < end + 4 + length) return;
      const reply = answer(seen, earlier++);
      seen = '';
      if (reply === null) return void socket.destroy();
      requests++;
      socket.write(reply);
      if (closeIdleAfterMs > 0) idle = setTimeout(() => socket.end(), closeIdleAfterMs);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  t.teardown(() => new Promise<void>((r) => {
    for (const socket of open) socket.destroy();
    server.close(() => r());
  }));
  const port = (server.address() as AddressInfo).port;
  return { port, url: `https://127.0.0.1:${port}`, connections: () => connections, answered: () => requests };
}
