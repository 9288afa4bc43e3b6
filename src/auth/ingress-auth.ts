import { ServiceError } from '../errors.js';
import type { Exchange } from '../http/exchange.js';
import type { QueueView } from '../ingress/queue-directory.js';
import type { KeyAuthenticator } from './key-authenticator.js';

/**
 * Checks the credential a queue's auth mode asks for (reference §5). A key of
 * another license or another workspace is refused exactly like a wrong key, so
 * the answer says nothing about which keys exist.
 */
export class IngressAuth {
  constructor(private readonly keys: KeyAuthenticator) {}

  async check(exchange: Exchange, queue: QueueView): Promise<void> {
    switch (queue.settings.authMode) {
      case 'api_key':
        return this.checkApiKey(exchange, queue);
      default:
        // Signed-request and payments verification arrive with the full ingress.
        throw new ServiceError('queue_paused', `Auth mode ${queue.settings.authMode} is not available yet.`);
    }
  }

  private async checkApiKey(exchange: Exchange, queue: QueueView): Promise<void> {
    const presented = exchange.headers['x-api-key'];
    if (presented === undefined || presented === '') throw new ServiceError('missing_api_key');
    const key = await this.keys.authenticate(presented);
    if (key.licenseId !== queue.licenseId || (key.workspaceId !== null && key.workspaceId !== queue.workspaceId)) {
      throw new ServiceError('invalid_api_key');
    }
    if (key.queueScopes !== null && !key.queueScopes.includes(queue.queueName)) {
      throw new ServiceError('client_scope_denied');
    }
  }
}
