/**
 * A queue's settings (contract §4), stored as JSON on the queue row. The
 * skeleton reads authMode, ingress state and archive flag; later settings
 * (extraction sources, mapped headers, signing) are added here.
 */
export type AuthMode = 'api_key' | 'signed_request' | 'payments';
export type IngressState = 'accepting' | 'closed';

export interface QueueSettings {
  authMode: AuthMode;
  ingress: IngressState;
  archived: boolean;
  groupKeyRequired: boolean;
  hopBudget: number;
  dedupWindowSeconds: number;
}

export const AUTH_MODES: readonly AuthMode[] = ['api_key', 'signed_request', 'payments'];
export const INGRESS_STATES: readonly IngressState[] = ['accepting', 'closed'];

export const DEFAULT_QUEUE_SETTINGS: Readonly<QueueSettings> = Object.freeze({
  authMode: 'api_key',
  ingress: 'accepting',
  archived: false,
  groupKeyRequired: false,
  hopBudget: 10,
  dedupWindowSeconds: 86_400,
});

/** Fills settings stored by an older version with today's defaults. */
export function withQueueDefaults(stored: Partial<QueueSettings>): QueueSettings {
  return { ...DEFAULT_QUEUE_SETTINGS, ...stored };
}
