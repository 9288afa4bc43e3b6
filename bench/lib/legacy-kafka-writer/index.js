// The home-made Kafka writer (KafkaWriter over KafkaProducer, speaking the Kafka
// wire protocol itself) as of commit f9588fd, frozen as plain JS: the files
// beside this one are tsc's output of src/log/ at that commit with nothing
// changed but this header. It exists only for the A/B of issue 12
// (bench/kafka-writer.mjs: the writer on @platformatic/kafka against this one in
// the same run) and will be deleted once that A/B is recorded. It depends on
// nothing in dist/, so it keeps running after dist/ is rebuilt from the new code.
//
// Same constructor as the new writer, (settings, log): settings is the `kafka`
// config section (brokers, clientId, topic, producer: { lingerMs, maxBatch,
// maxInFlight, retryMs, requestTimeoutMs, connectTimeoutMs, maxBatchBytes });
// log is a pino logger (it calls child, debug, info, warn, error).
export { KafkaWriter } from './kafka-writer.js';

/**
 * The producer settings streamgate shipped with this writer (config/default.yaml
 * at f9588fd), so the A/B runs it as it ran in production even after the
 * defaults change for the new one.
 */
export const legacyProducerDefaults = Object.freeze({
  lingerMs: 0,
  maxBatch: 2000,
  maxInFlight: 1,
  retryMs: 30000,
  requestTimeoutMs: 30000,
  connectTimeoutMs: 5000,
  maxBatchBytes: 900000,
});
