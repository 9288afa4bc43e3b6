import type { Router } from '../http/router.js';

interface SunkDelivery {
  at: string;
  eventId: string | null;
  eventType: string | null;
  contentType: string | null;
  body: string;
}

const KEEP = 100;

/**
 * A receiver built into single-machine mode: the first-run placeholder target
 * points here, so a newcomer's first event has somewhere to arrive and
 * `GET /dev/sink` shows it. Keeps the last 100 deliveries in memory.
 */
export function registerDevSink(router: Router, maxBodyBytes: number): void {
  const sunk: SunkDelivery[] = [];
  router.add('post', '/dev/sink', { maxBodyBytes }, async (ex) => {
    const body = await ex.body;
    sunk.push({
      at: new Date().toISOString(),
      eventId: ex.headers['x-service-event-id'] ?? null,
      eventType: ex.headers['x-service-event-type'] ?? null,
      contentType: ex.headers['content-type'] ?? null,
      body: body.subarray(0, 4096).toString('utf8'),
    });
    if (sunk.length > KEEP) sunk.splice(0, sunk.length - KEEP);
    ex.sendJson(200, { received: true });
  });
  router.add('get', '/dev/sink', { maxBodyBytes: 0 }, (ex) => ex.sendJson(200, { deliveries: [...sunk].reverse() }));
}
