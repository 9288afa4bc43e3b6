import type { Router } from '../../http/router.js';
import type { WaasDeps } from './waas-context.js';
import { registerWaasActivations } from './waas-activations.js';
import { registerWaasBlocks } from './waas-blocks.js';
import { registerWaasIntegrations } from './waas-integrations.js';
import { registerWaasMetrics } from './waas-metrics.js';
import { registerWaasPackages } from './waas-packages.js';
import { registerWaasStreams } from './waas-streams.js';
import { registerWaasSubscriptions } from './waas-subscriptions.js';

/**
 * The producer API, /waas/* (docs/api.md#producer-api-waas). Auth on every
 * route: a Build key with X-License-PublicId, or a console session whose
 * subject is Owner/Admin (writes) or any member (reads) of the workspace.
 */
export function registerWaasApi(router: Router, deps: WaasDeps): void {
  registerWaasStreams(router, deps);
  registerWaasIntegrations(router, deps);
  registerWaasSubscriptions(router, deps);
  registerWaasActivations(router, deps);
  registerWaasPackages(router, deps);
  registerWaasBlocks(router, deps);
  registerWaasMetrics(router, deps);
}
