import { Pool } from 'undici';

/**
 * Open-loop load at a fixed rate, one record per request: unlike autocannon
 * (closed loop: a connection waits for its answer), requests keep being sent
 * while the service hangs on a dead broker, which is what an outage looks like
 * to real senders. Requests in flight are capped (`maxInFlight`, one connection
 * each); a tick that finds the cap reached skips its requests and counts them,
 * so a request is never queued in the client and sent late.
 *
 * Each request carries `"seq":N` in its body and a partition key from `keys`
 * (an array, taken round robin); its record keeps send and answer times, the status, the
 * event id of a 202 and the error code of anything else.
 */
export function startPacedLoad({ url, path, headers, rate, keys, bodyBytes, maxInFlight = 1000, timeoutMs = 90_000 }) {
  const pool = new Pool(url, { connections: maxInFlight, pipelining: 1, headersTimeout: timeoutMs, bodyTimeout: timeoutMs, keepAliveTimeout: 30_000 });
  const records = [];
  const now = () => performance.timeOrigin + performance.now();
  const started = now();
  let inFlight = 0;
  let skipped = 0;
  let stopped = false;
  let settle = null;

  const send = () => {
    const seq = records.length;
    const key = keys[seq % keys.length];
    const prefix = `{"seq":${seq},"key":"${key}","pad":"`;
    const body = `${prefix}${'x'.repeat(Math.max(0, bodyBytes - prefix.length - 2))}"}`;
    const record = { seq, key, sentAt: now(), doneAt: null, status: null, eventId: null, code: null };
    records.push(record);
    inFlight++;
    pool
      .request({ method: 'POST', path, headers: { ...headers, 'x-service-partition-key': key }, body })
      .then(async (res) => {
        const text = await res.body.text();
        record.status = res.statusCode;
        try {
          const parsed = JSON.parse(text);
          if (res.statusCode === 202) record.eventId = parsed.eventId;
          else record.code = parsed.code ?? parsed.error?.code ?? null;
        } catch {
          record.code = 'non-json';
        }
      })
      .catch((err) => {
        record.status = 'error';
        record.code = err.code ?? err.name;
      })
      .finally(() => {
        record.doneAt = now();
        inFlight--;
        if (stopped && inFlight === 0) settle?.();
      });
  };

  // 10 ms ticks; each sends what the schedule owes so far (a late tick catches up).
  const timer = setInterval(() => {
    const due = Math.floor(((now() - started) / 1000) * rate) - records.length - skipped;
    for (let i = 0; i < due; i++) {
      if (inFlight >= maxInFlight) skipped++;
      else send();
    }
  }, 10);

  return {
    records,
    inFlight: () => inFlight,
    skipped: () => skipped,
    /** Stops sending and waits for the answers of what is in flight. */
    async stop() {
      stopped = true;
      clearInterval(timer);
      if (inFlight > 0) await new Promise((resolve) => (settle = resolve));
      await pool.close();
    },
  };
}
