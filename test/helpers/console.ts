import http from 'node:http';

/** An answer as a browser would see it, with every Set-Cookie line kept. */
export interface ConsoleResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  setCookies: string[];
  text: string;
  json: any;
}

/**
 * One HTTP request on a fresh connection (no keep-alive pool: "a new
 * connection" is what some tests assert), with exactly the headers given
 * (fetch would add or refuse Origin and Sec-Fetch-* itself) and no redirect
 * following.
 */
export function httpCall(base: string, method: string, path: string, opts: { headers?: Record<string, string>; body?: unknown } = {}): Promise<ConsoleResponse> {
  const url = new URL(path, base);
  const headers: Record<string, string> = { ...opts.headers };
  let body: string | undefined;
  if (opts.body !== undefined) {
    body = typeof opts.body === 'string' ? opts.body : JSON.stringify(opts.body);
    headers['content-type'] ??= 'application/json';
  }
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown = null;
        try {
          json = text ? JSON.parse(text) : null;
        } catch {
          // not JSON
        }
        resolve({ status: res.statusCode!, headers: res.headers, setCookies: res.headers['set-cookie'] ?? [], text, json });
      });
    });
    req.on('error', reject);
    req.end(body);
  });
}

/** The value a Set-Cookie line of this name sets, or null. */
export function cookieValue(setCookies: string[], name: string): string | null {
  const line = setCookies.find((c) => c.startsWith(`${name}=`));
  return line ? line.slice(name.length + 1).split(';')[0]! : null;
}

/** The Set-Cookie line of this name, or undefined. */
export function cookieLine(setCookies: string[], name: string): string | undefined {
  return setCookies.find((c) => c.startsWith(`${name}=`));
}
