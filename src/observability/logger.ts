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
        // The Kafka SASL password wherever the config, or a part of it, is logged
        // (pino's `*` matches one level only, so each depth is named).
        'sasl.password', '*.sasl.password', 'kafka.sasl.password', '*.kafka.sasl.password', '*.*.kafka.sasl.password',
      ],
      censor: '[redacted]',
    },
  };
  // A destination only in tests, which read what would have been written.
  return destination ? pino(options, destination) : pino(options);
}
