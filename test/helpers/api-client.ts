import type { BootstrapResult } from '../../src/api/setup/bootstrap.js';

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Headers;
  body: T;
}

/** A small client of the management and ingress HTTP API, as a user would call it. */
export class ApiClient {
  readonly baseUrl: string;
  readonly creds: BootstrapResult;
  constructor(
    baseUrl: string,
    creds: BootstrapResult,
  ) {
    this.baseUrl = baseUrl;
    this.creds = creds;
  }

  async request<T = any>(method: string, path: string, opts: { body?: unknown; headers?: Record<string, string>; raw?: Buffer | string } = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...opts.headers };
    let body: Buffer | string | undefined = opts.raw;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const res = await fetch(this.baseUrl + path, { method, headers, body });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : null;
    } catch {
      // not JSON: keep the text
    }
    return { status: res.status, headers: res.headers, body: parsed as T };
  }

  /** Management call with the bootstrap Build key. */
  manage<T = any>(method: string, path: string, body?: unknown): Promise<ApiResponse<T>> {
    return this.request<T>(method, path, {
      body,
      headers: { 'x-api-key': this.creds.buildKey, 'x-license-publicid': this.creds.licensePublicId },
    });
  }

  tenantPath(rest: string): string {
    return `/v1/tenants/${this.creds.tenantPublicId}${rest}`;
  }

  /** Creates queue → target → route in the bootstrap workspace. */
  async wire(queue: string, target: string, url: string, queueSettings: object = {}, targetSettings: object = {}): Promise<void> {
    const q = await this.manage('PUT', this.tenantPath(`/queues/${queue}`), queueSettings);
    const tg = await this.manage('PUT', this.tenantPath(`/targets/${target}`), { url, ...targetSettings });
    const r = await this.manage('PUT', this.tenantPath(`/queues/${queue}/targets/${target}`));
    for (const res of [q, tg, r]) {
      if (res.status >= 300) throw new Error(`wiring failed: ${res.status} ${JSON.stringify(res.body)}`);
    }
  }

  postEvent(queue: string, body: Buffer | string, headers: Record<string, string> = {}): Promise<ApiResponse<any>> {
    return this.request('POST', `/events/${this.creds.tenantPublicId}/${queue}`, {
      raw: body,
      headers: { 'x-api-key': this.creds.ingressKey, 'content-type': 'application/json', ...headers },
    });
  }
}
