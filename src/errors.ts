/**
 * The one error catalog. Every code a client can see is an entry here: its HTTP
 * status, a default message, and whether retrying the same request can succeed.
 * Code branches on `code` and the flags, never on message text.
 */

interface ErrorSpec {
  readonly status: number;
  readonly message: string;
  /** Retrying the same request later can succeed (e.g. 503, 429). */
  readonly retryable: boolean;
}

const spec = (status: number, message: string, retryable = false): ErrorSpec => ({ status, message, retryable });

export const errorCatalog = {
  // Ingress (docs/api.md#errors)
  context_group_key_required: spec(400, 'This queue requires a group key and none was found.'),
  context_group_key_invalid: spec(400, 'The group key contains control characters.'),
  context_partition_key_invalid: spec(400, 'The partition key contains control characters.'),
  context_event_type_key_invalid: spec(400, 'The event type contains control characters.'),
  context_group_key_too_long: spec(400, 'The group key is over the length limit.'),
  context_partition_key_too_long: spec(400, 'The partition key is over the length limit.'),
  context_event_type_key_too_long: spec(400, 'The event type is over the length limit.'),
  outbound_header_required: spec(400, 'A required mapped header found no value.'),
  outbound_header_invalid: spec(400, 'A mapped header value is not something a header can carry.'),
  sandbox_query_not_allowed: spec(400, 'Sandbox query parameters are only allowed on the sandbox route.'),
  invalid_body: spec(400, 'The request body could not be read as the queue requires.'),
  invalid_header: spec(400, 'A request header is malformed.'),
  bad_request: spec(400, 'The request is not valid HTTP/1.1.'),
  header_too_large: spec(431, 'The request head is too large.'),
  not_implemented: spec(501, 'The method or transfer coding is not implemented.'),
  http_version_not_supported: spec(505, 'Only HTTP/1.1 and HTTP/1.0 are served.'),
  missing_api_key: spec(401, 'This queue requires an API key in the X-Api-Key header.'),
  invalid_api_key: spec(401, 'The API key is not valid.'),
  invalid_signature: spec(401, 'The request signature is not valid.'),
  timestamp_out_of_range: spec(401, 'The request timestamp is outside the allowed skew.'),
  replayed_request: spec(401, 'This nonce has already been used.'),
  ip_not_allowed: spec(403, 'The client address is not allowed for this queue.'),
  client_scope_denied: spec(403, 'The credentials are not scoped to this queue.'),
  missing_permission: spec(403, 'The credentials lack the permission this operation needs.'),
  not_found: spec(404, 'The resource was not found.'),
  ingress_closed: spec(409, "The queue's ingress is closed."),
  queue_archived: spec(409, 'The queue or workspace is archived.'),
  queue_paused: spec(409, 'The queue has no valid mode.'),
  loop_detected: spec(422, 'The X-Service-Path chain forms a cycle.'),
  max_hops_exceeded: spec(422, 'The X-Service-Path chain exceeds the hop budget.'),
  // Management and shared (docs/api.md#conventions)
  unauthorized: spec(401, 'Authentication is required.'),
  forbidden: spec(403, 'This operation is not allowed.'),
  validation_failed: spec(400, 'The request is not valid.'),
  conflict: spec(409, 'The request conflicts with the current state.'),
  request_timeout: spec(408, 'The request did not arrive in time.', true),
  payload_too_large: spec(413, 'The request body is too large.'),
  unsupported_media_type: spec(415, 'The request body must be application/json.'),
  method_not_allowed: spec(405, 'The method is not allowed on this path.'),
  rate_limited: spec(429, 'Too many requests.', true),
  internal: spec(500, 'An internal error occurred.', true),
  unavailable: spec(503, 'The service cannot accept this request right now.', true),
} as const satisfies Record<string, ErrorSpec>;

export type ErrorCode = keyof typeof errorCatalog;

/** One bad field of a request, reported under `details` of validation_failed. */
export interface FieldProblem {
  field: string;
  problem: string;
}

/** An error with a catalog code; the HTTP layers turn it into the envelope. */
export class ServiceError extends Error {
  readonly status: number;
  readonly retryable: boolean;
  readonly code: ErrorCode;
  readonly details?: FieldProblem[] | Record<string, unknown>;
  constructor(
    code: ErrorCode,
    message?: string,
    details?: FieldProblem[] | Record<string, unknown>,
  ) {
    super(message ?? errorCatalog[code].message);
    this.code = code;
    this.details = details;
    this.status = errorCatalog[code].status;
    this.retryable = errorCatalog[code].retryable;
  }
}

export function isServiceError(err: unknown): err is ServiceError {
  return err instanceof ServiceError;
}

/** The JSON envelope every endpoint answers errors with (docs/api.md#conventions). */
export function errorEnvelope(err: ServiceError): string {
  const body: { code: string; message: string; details?: unknown } = { code: err.code, message: err.message };
  if (err.details !== undefined) body.details = err.details;
  return JSON.stringify({ error: body });
}
