import type { ApiClient } from './api-client.js';

/** One request of a load and how it went. */
export interface Sent {
  at: number;
  ms: number;
  status: number;
  code: string | null;
  eventId: string | null;
}

/** Times one call: its status, error code, event id and duration (status 0: no HTTP answer). */
export async function timed(call: () => Promise<{ status: number; body: any }>): Promise<Sent> {
  const at = Date.now();
  try {
    const res = await call();
    const body = res.body as { eventId?: string; error?: { code?: string } } | null;
    return { at, ms: Date.now() - at, status: res.status, code: body?.error?.code ?? null, eventId: body?.eventId ?? null };
  } catch {
    return { at, ms: Date.now() - at, status: 0, code: null, eventId: null };
  }
}

/**
 * A steady trickle of events to one queue (API key, no Idempotency-Key),
 * one request every `everyMs`, each answer recorded, until stop().
 */
export class Trickle {
  readonly sent: Sent[] = [];
  private running = true;
  private readonly done: Promise<void>;

  constructor(api: ApiClient, queue: string, everyMs = 50) {
    this.done = (async () => {
      const inFlight = new Set<Promise<void>>();
      for (let n = 0; this.running; n++) {
        const p = timed(() => api.postEvent(queue, JSON.stringify({ n }))).then((s) => {
          this.sent.push(s);
          inFlight.delete(p);
        });
        inFlight.add(p);
        await new Promise((r) => setTimeout(r, everyMs));
      }
      await Promise.all(inFlight);
    })();
  }

  /** Stops sending and waits for every answer. */
  async stop(): Promise<Sent[]> {
    this.running = false;
    await this.done;
    return this.sent;
  }

  accepted(): string[] {
    return this.sent.filter((s) => s.status === 202 && s.eventId).map((s) => s.eventId!);
  }
}
