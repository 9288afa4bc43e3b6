import type { BootstrapResult } from '../../src/api/setup/bootstrap.js';
import { ApiClient, type ApiResponse } from './api-client.js';
import type { Receiver } from './receiver.js';

/** A partner account as accept onto a new free account returns it. */
export interface Partner {
  api: ApiClient;
  integrationPublicId: string;
  receivingTenantPublicId: string;
}

function ok<T>(res: ApiResponse<T>, what: string): T {
  if (res.status >= 300) throw new Error(`${what} failed: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body;
}

/** The /waas flows a producer and its partner go through, over HTTP as a user would. */
export class Waas {
  readonly producer: ApiClient;
  constructor(producer: ApiClient) {
    this.producer = producer;
  }

  get tenant(): string {
    return this.producer.creds.tenantPublicId;
  }

  async putStream(name: string, extra: Record<string, unknown> = {}): Promise<{ publicId: string; key: string; status: string }> {
    return ok(await this.producer.manage('PUT', '/waas/streams', { producerTenantPublicId: this.tenant, name, isPublic: true, ...extra }), `PUT stream ${name}`);
  }

  async invite(email: string): Promise<{ publicId: string; inviteToken: string }> {
    return ok(await this.producer.manage('POST', '/waas/integrations', { producerTenantPublicId: this.tenant, email }), 'invite');
  }

  /** Invites and accepts onto a new free account; the partner client uses the Build key shown once. */
  async newPartner(email: string): Promise<Partner> {
    const invite = await this.invite(email);
    const accepted = ok(
      await this.producer.request('POST', `/waas/integrations/${invite.publicId}/accept`, { body: { inviteToken: invite.inviteToken } }),
      'accept',
    );
    const creds: BootstrapResult = {
      licensePublicId: accepted.licensePublicId,
      tenantPublicId: accepted.receivingTenantPublicId,
      buildKey: accepted.buildKey,
      ingressKey: '',
    };
    return { api: new ApiClient(this.producer.baseUrl, creds), integrationPublicId: invite.publicId, receivingTenantPublicId: accepted.receivingTenantPublicId };
  }

  async subscribe(partner: Partner, catalogEntryPublicId: string): Promise<{ publicId: string; status: string; receivingQueue: string }> {
    return ok(await partner.api.manage('POST', `/waas/integrations/${partner.integrationPublicId}/subscriptions`, { catalogEntryPublicId }), 'subscribe');
  }

  /** The partner routes its receiving queue for `stream` to a target at `url` (normal /v1 API). */
  async partnerTarget(partner: Partner, stream: string, target: string, url: string): Promise<void> {
    ok(await partner.api.manage('PUT', partner.api.tenantPath(`/targets/${target}`), { url }), 'partner target');
    ok(await partner.api.manage('PUT', partner.api.tenantPath(`/queues/${stream}/targets/${target}`)), 'partner route');
  }

  async activate(partner: Partner, groupKey: string): Promise<{ publicId: string; status: string }> {
    return ok(
      await this.producer.manage('POST', '/waas/activations', { producerTenantPublicId: this.tenant, groupKey, integrationPublicId: partner.integrationPublicId }),
      'activate',
    );
  }

  async revoke(partner: Partner, groupKey: string): Promise<void> {
    ok(await this.producer.manage('DELETE', '/waas/activations', { producerTenantPublicId: this.tenant, groupKey, integrationPublicId: partner.integrationPublicId }), 'revoke');
  }

  async createPackage(name: string): Promise<{ publicId: string; key: string }> {
    return ok(await this.producer.manage('POST', `/waas/producer/${this.tenant}/packages`, { name }), 'create package');
  }

  async addToPackage(pkg: string, cat: string): Promise<void> {
    ok(await this.producer.manage('POST', `/waas/producer/${this.tenant}/packages/${pkg}/streams`, { catalogEntryPublicId: cat }), 'add to package');
  }

  blockPath(partner: Partner, kind: 'streams' | 'packages', id: string): string {
    return `/waas/producer/${this.tenant}/integrations/${partner.integrationPublicId}/blocks/${kind}/${id}`;
  }

  async block(partner: Partner, kind: 'streams' | 'packages', id: string): Promise<void> {
    const res = await this.producer.manage('POST', this.blockPath(partner, kind, id));
    if (res.status !== 204) throw new Error(`block failed: ${res.status} ${JSON.stringify(res.body)}`);
  }

  async unblock(partner: Partner, kind: 'streams' | 'packages', id: string): Promise<void> {
    const res = await this.producer.manage('DELETE', this.blockPath(partner, kind, id));
    if (res.status !== 204) throw new Error(`unblock failed: ${res.status} ${JSON.stringify(res.body)}`);
  }

  /** The subscription's status as the producer's integration list shows it. */
  async status(partner: Partner, cat: string): Promise<string | undefined> {
    const list = ok(await this.producer.manage('GET', `/waas/producer/${this.tenant}/integrations`), 'list integrations');
    const integration = (list.data as Array<{ publicId: string; subscriptions: Array<{ catalogEntryPublicId: string; status: string }> }>)
      .find((i) => i.publicId === partner.integrationPublicId);
    return integration?.subscriptions.find((s) => s.catalogEntryPublicId === cat)?.status;
  }

  /** The same status as the partner sees it on its own subscriptions. */
  async partnerStatus(partner: Partner, cat: string): Promise<string | undefined> {
    const list = ok(await partner.api.manage('GET', `/waas/integrations/${partner.integrationPublicId}/subscriptions`), 'list subscriptions');
    return (list.data as Array<{ catalogEntryPublicId: string; status: string }>).find((s) => s.catalogEntryPublicId === cat)?.status;
  }

  /** Posts an event to a stream with a group key and a partition key; returns its event id. */
  async post(stream: string, groupKey: string | null, partitionKey: string, body: object = {}): Promise<string> {
    const headers: Record<string, string> = { 'x-service-partition-key': partitionKey };
    if (groupKey !== null) headers['x-service-group-key'] = groupKey;
    return ok(await this.producer.postEvent(stream, JSON.stringify(body), headers), `post to ${stream}`).eventId as string;
  }
}

/** Waits until the receiver got `eventId`. */
export function arrives(receiver: Receiver, eventId: string, what = eventId, timeoutMs = 30_000): Promise<void> {
  return receiver.waitFor((r) => r.some((x) => x.headers['x-service-event-id'] === eventId), timeoutMs, what);
}

export function received(receiver: Receiver, eventId: string): boolean {
  return receiver.requests.some((x) => x.headers['x-service-event-id'] === eventId);
}
