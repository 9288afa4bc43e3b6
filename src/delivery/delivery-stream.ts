import type { Config } from '../config/schema.js';

/**
 * The delivery pipeline a process belongs to: '<consumer group>/<topic>'.
 * Partitions are owned within a consumer group, so parked lanes, the record of
 * finished deliveries and redelivery requests are kept per pipeline (see
 * migration 030).
 */
export function deliveryStream(kafka: Pick<Config['kafka'], 'groupId' | 'topic'>): string {
  return `${kafka.groupId}/${kafka.topic}`;
}
