import { subscribe } from 'node:diagnostics_channel';
import type { Connection } from '@platformatic/kafka';

/**
 * Works around a crash in @platformatic/kafka 1.35: when a SASL handshake is
 * still queued as its connection fails (a plain-text client meets a TLS
 * listener, or the broker hangs up mid-authentication), the connection emits a
 * second 'error' after the first one has already failed the caller and every
 * listener is gone; an EventEmitter with no 'error' listener throws, and the
 * process dies with an uncaught exception instead of the caller's clear error.
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
