import { ServiceError } from '../errors.js';
import type { SourceRef } from '../routing/queue-settings.js';

const utf8 = new TextDecoder('utf-8', { fatal: true });

/**
 * Reads a value named by a SourceRef (docs/api.md#configuration-api): a request header, a query
 * parameter or a top-level field of a JSON body. The query and the body are
 * parsed only when a queue reads from them, at most once per request.
 *
 * `read` answers the value as text, `null` when it is absent or empty (an empty
 * value carries no key), or `undefined` when a body field holds something
 * that is not a scalar (an object or an array cannot be a key or a header).
 */
export class RequestValues {
  private query: URLSearchParams | null = null;
  private json: Record<string, unknown> | null = null;

  private readonly headers: Readonly<Record<string, string>>;
  private readonly rawQuery: string;
  private readonly body: Buffer | null;
  constructor(
    headers: Readonly<Record<string, string>>,
    rawQuery: string,
    body: Buffer | null,
  ) {
    this.headers = headers;
    this.rawQuery = rawQuery;
    this.body = body;
  }

  /**
   * Parses the body as a JSON object now, so a queue that reads body fields
   * refuses a body that is not one (invalid_body) whatever values are present.
   */
  requireJsonBody(): void {
    if (this.json) return;
    let value: unknown;
    try {
      // fatal: bytes that are not UTF-8 are not JSON (RFC 8259 §8.1), not U+FFFD.
      value = JSON.parse(utf8.decode(this.body ?? Buffer.alloc(0)));
    } catch {
      throw new ServiceError('invalid_body', 'This queue reads fields from the body: it must be a JSON object (UTF-8).');
    }
    if (typeof value !== 'object' || value === null || Array.isArray(value)) {
      throw new ServiceError('invalid_body', 'This queue reads fields from the body: it must be a JSON object, not an array or a scalar.');
    }
    this.json = value as Record<string, unknown>;
  }

  read(ref: SourceRef): string | null | undefined {
    switch (ref.source) {
      case 'header':
        return this.headers[ref.name] || null;
      case 'query':
        this.query ??= new URLSearchParams(this.rawQuery);
        return this.query.get(ref.name) || null;
      case 'body': {
        this.requireJsonBody();
        // Own properties only: "__proto__" or "constructor" must not reach the prototype.
        if (!Object.prototype.hasOwnProperty.call(this.json, ref.name)) return null;
        const v = this.json![ref.name];
        if (typeof v === 'string') return v || null;
        if (typeof v === 'number') return Number.isFinite(v) ? String(v) : undefined;
        if (typeof v === 'boolean') return String(v);
        if (v === null) return null;
        return undefined;
      }
    }
  }
}
