/** An attempt as the inspection API shows it (docs/delivery.md). */
export interface AttemptEntry {
  /** ISO-8601 UTC. */
  at: string;
  /** HTTP status, or null when no response came (network error, timeout). */
  status: number | null;
  durationMs: number;
  error: string | null;
  /** Sandbox: the attempt was simulated, nothing was sent. */
  simulated?: true;
}

/**
 * The attempts of one delivery as its line of event_log.deliveries keeps them
 * (migrations 070 and 090, src/storage/delivery-state-codec.ts): one JSON
 * array per attempt, comma-separated, so that a write appends with plain text
 * concatenation:
 *
 *   [atMs,status,durationMs]                  an answer
 *   [atMs,null,durationMs,"error"]            no answer (or any error text)
 *   [atMs,status,durationMs,error,1]          simulated (sandbox)
 *
 * atMs is the attempt's time minus the event's receive time: a first attempt
 * that succeeded is `[4,200,3]`, 10 bytes, where the objects of `{at, status,
 * durationMs, error}` took 112 as jsonb (docs/decisions/bounded-storage.md).
 */
export function encodeAttempts(attempts: readonly AttemptEntry[], receivedAtMs: number): string {
  return attempts.map((a) => {
    const at = Date.parse(a.at) - receivedAtMs;
    if (a.simulated) return JSON.stringify([at, a.status, a.durationMs, a.error, 1]);
    if (a.error !== null) return JSON.stringify([at, a.status, a.durationMs, a.error]);
    return JSON.stringify([at, a.status, a.durationMs]);
  }).join(',');
}

type Encoded = [number, number | null, number, (string | null)?, 1?];

export function decodeAttempts(text: string, receivedAtMs: number): AttemptEntry[] {
  if (text === '') return [];
  return (JSON.parse(`[${text}]`) as Encoded[]).map(([at, status, durationMs, error, simulated]) => {
    const entry: AttemptEntry = { at: new Date(receivedAtMs + at).toISOString(), status, durationMs, error: error ?? null };
    if (simulated === 1) entry.simulated = true;
    return entry;
  });
}
