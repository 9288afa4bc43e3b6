import pino, { type Logger } from 'pino';

export type { Logger };

/**
 * The process logger. Credentials never reach it: the redact paths cover the
 * headers and fields that carry secrets, in case a caller logs a request.
 */
export function createLogger(level: string, name = 'streamgate', destination?: pino.DestinationStream): Logger {
  const options: pino.LoggerOptions = {
    name,
    level,
    redact: {
      paths: [
        'headers["x-api-key"]', 'headers.authorization', 'headers["x-service-signature"]',
        'secret', '*.secret', 'password', '*.password', 'token', '*.token', 'clientSecret', '*.clientSecret',
        // Queue secrets, in a queue's settings or a PUT body.
        'paymentsSecret', '*.paymentsSecret', 'sourceSecret', '*.sourceSecret', '*.*.sourceSecret',
        // The Kafka SASL password wherever the config, or a part of it, is logged
        // (pino's `*` matches one level only, so each depth is named).
        'sasl.password', '*.sasl.password', 'kafka.sasl.password', '*.kafka.sasl.password', '*.*.kafka.sasl.password',
        // The key encryption key of ed25519 signing keys, likewise; and webhook signatures a caller may log.
        'keyEncryptionKey', '*.keyEncryptionKey', 'signing.keyEncryptionKey', '*.signing.keyEncryptionKey', '*.*.signing.keyEncryptionKey',
        'previousKeyEncryptionKeys', '*.previousKeyEncryptionKeys', 'signing.previousKeyEncryptionKeys', '*.signing.previousKeyEncryptionKeys', '*.*.signing.previousKeyEncryptionKeys',
        'headers["webhook-signature"]', 'privateKey', '*.privateKey',
      ],
      censor: '[redacted]',
    },
    serializers: { err: serializeError },
  };
  // A destination only in tests, which read what would have been written.
  return destination ? pino(options, destination) : pino(options);
}

/** Error fields a log line keeps; anything else an error object carries stays out. */
interface LoggedError {
  type: string;
  message: string;
  stack?: string;
  code?: string | number;
  cause?: LoggedError;
}

/**
 * `err` in a log line: type, message, stack, code and cause, nothing else.
 * pino's own serializer copies every enumerable property, and client errors
 * carry more than their message: a Redis reply error its command's arguments
 * (idempotency keys, nonces), a Postgres error the row that collided, an
 * HTTP error the request. Messages are ours or the client libraries', which
 * do not quote credentials.
 */
export function serializeError(value: unknown, depth = 0): LoggedError | unknown {
  if (!(value instanceof Error)) return value;
  const out: LoggedError = { type: value.constructor?.name ?? 'Error', message: value.message };
  if (value.stack !== undefined) out.stack = value.stack;
  const code = (value as { code?: unknown }).code;
  if (typeof code === 'string' || typeof code === 'number') out.code = code;
  if (value.cause instanceof Error && depth < 3) out.cause = serializeError(value.cause, depth + 1) as LoggedError;
  return out;
}
