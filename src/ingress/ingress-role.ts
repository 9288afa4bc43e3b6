import { IngressAuth } from '../auth/ingress-auth.js';
import type { NodeContext, RoleHandle } from '../node-context.js';
import { postEventHandler } from './post-event.js';
import { QueueDirectory } from './queue-directory.js';

/** Registers the ingress routes and connects the log writer. */
export async function startIngressRole(ctx: NodeContext): Promise<RoleHandle> {
  const { config } = ctx;
  const writer = await ctx.eventLog.openWriter();
  const queues = new QueueDirectory(ctx.topology, config.ingress.cacheTtlMs);
  ctx.bus.onInvalidate(() => queues.invalidate());

  let inFlight = 0;
  const handle = postEventHandler({ queues, auth: new IngressAuth(ctx.keys), log: writer, keyMaxBytes: config.ingress.keyMaxBytes });
  ctx.router.add('post', '/events/:tenant/:queue', { maxBodyBytes: config.server.maxBodyBytes }, async (ex) => {
    inFlight++;
    try {
      await handle(ex);
    } finally {
      inFlight--;
    }
  });

  return {
    async drain(deadline) {
      // Requests already inside get their answer; the writer flushes what waits.
      while (inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await writer.close();
    },
  };
}
