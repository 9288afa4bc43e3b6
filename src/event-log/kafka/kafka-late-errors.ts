import { subscribe } from 'node:diagnostics_channel';
import type { Connection } from '@platformatic/kafka';

/**
 * Works around a crash in @platformatic/kafka (1.35, still in 2.12.1): when
 * the socket of a connection fails with an error (a reset, not a clean close)
 * while its SASL exchange is under way, the connection emits 'error' twice.
 * The first fails the caller, and the pool's one-shot listener goes with it;
 * the second comes from the SASL request failing on the closed socket, finds
 * no listener, and an EventEmitter with no 'error' listener throws: the process
 * dies with an uncaught exception instead of the caller's clear error
 * (test/unit/event-log/kafka/kafka-late-errors.test.ts; docs/kafka-client.md, "Reported
 * upstream").
 *
 * The library announces each connection it creates on the `plt:kafka:instances`
 * diagnostics channel; each one gets a listener that ignores errors. Nothing is
 * lost: the library reports every error that matters through callbacks, and
 * its own 'error' listeners (connect, ready, the pool) still run.
 */
let installed = false;

export function guardLateConnectionErrors(): void {
  if (installed) return;
  installed = true;
  subscribe('plt:kafka:instances', (message) => {
    const { type, instance } = message as { type?: string; instance?: Connection };
    if (type === 'connection' && instance) instance.on('error', ignore);
  });
}

function ignore(): void {}
