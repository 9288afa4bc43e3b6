import type { Router } from '../../http/router.js';
import { StreamConflict, type CatalogItem, type StreamInput } from '../../storage/waas-catalog-repo.js';
import type { WorkspaceRow } from '../../storage/topology-repo.js';
import { ServiceError } from '../../errors.js';
import type { Exchange } from '../../http/exchange.js';
import { FieldReader } from '../json-body.js';
import { param, PUBLIC_ID, published, readBody, STREAM_NAME, writer, type WaasDeps } from './waas-context.js';

const STREAM_FIELDS = ['producerTenantPublicId', 'name', 'description', 'eventTypes', 'payloadSchema', 'isPublic'] as const;
const EVENT_TYPE = /^[^\u0000-\u001f\u007f-\u009f]{1,255}$/;

/**
 * Streams and the catalog (docs/api.md): the declarative PUT /waas/streams,
 * POST /waas/enable-producer, and the catalog of published streams.
 */
export function registerWaasStreams(router: Router, deps: WaasDeps): void {
  const opts = { maxBodyBytes: deps.maxBodyBytes };

  router.add('put', '/waas/streams', opts, async (ex) => {
    const caller = await writer(deps, ex);
    const { tenant, input } = readStream(await readBody(ex), deps.maxBodyBytes);
    const ws = await deps.auth.waasWorkspace(caller, tenant, 'write');
    let applied;
    try {
      applied = await deps.catalog.applyStream(ws.id, input);
    } catch (err) {
      if (err instanceof StreamConflict) throw new ServiceError('conflict', err.message);
      throw err;
    }
    const { entry, changed } = applied;
    if (changed) await published(deps);
    ex.send(200, JSON.stringify({ publicId: entry.publicId, key: entry.name, status: entry.status }), {
      'content-type': 'application/json',
      'x-streamgate-change': changed ? 'changed' : 'unchanged',
    });
  });

  router.add('post', '/waas/enable-producer', opts, async (ex) => {
    const caller = await writer(deps, ex);
    const r = new FieldReader(await readBody(ex), ['producerTenantPublicId']);
    const tenant = r.string('producerTenantPublicId', { required: true, pattern: PUBLIC_ID.tenant });
    r.done();
    const ws = await deps.auth.waasWorkspace(caller, tenant!, 'write');
    if (await deps.catalog.enableProducer(ws.id)) await published(deps);
    ex.sendJson(200, { tenantPublicId: ws.publicId, isProducer: true });
  });

  router.add('get', '/waas/producer/:tenant/catalog', opts, async (ex) => {
    const ws = await catalogReader(deps, ex, param(ex, 0));
    const items = await deps.catalog.published(ws.id);
    ex.sendJson(200, { data: items.map(catalogJson) });
  });
}

function readStream(body: Record<string, unknown>, maxBodyBytes: number): { tenant: string; input: StreamInput } {
  const r = new FieldReader(body, STREAM_FIELDS);
  const tenant = r.string('producerTenantPublicId', { required: true, pattern: PUBLIC_ID.tenant });
  const name = r.string('name', { required: true, pattern: STREAM_NAME });
  const description = r.string('description', { max: 4000 }) ?? '';
  const eventTypes = r.stringList('eventTypes', { max: 1000 }) ?? [];
  eventTypes.forEach((t, i) => {
    if (!EVENT_TYPE.test(t)) r.problem(`eventTypes[${i}]`, 'must be 1-255 characters without control characters');
  });
  if (new Set(eventTypes).size !== eventTypes.length) r.problem('eventTypes', 'must not repeat a type');
  // Opaque (rule 4): any string, kept exactly as sent.
  const payloadSchema = r.string('payloadSchema', { max: maxBodyBytes }) ?? null;
  const isPublic = r.boolean('isPublic');
  r.done();
  return {
    tenant: tenant!,
    input: { name: name!, description, eventTypes, payloadSchema, status: isPublic === true ? 'Published' : 'Deprecated' },
  };
}

/**
 * The producer reads its catalog; so does a partner it has linked (reference
 * §1: a linked partner can see every published stream), through any caller
 * that reaches the receiving workspace of one of the producer's accepted
 * integrations. Anyone else gets 404.
 */
async function catalogReader(deps: WaasDeps, ex: Exchange, tenant: string): Promise<WorkspaceRow> {
  const caller = await deps.auth.authenticateCaller(ex);
  try {
    return await deps.auth.waasWorkspace(caller, tenant, 'read');
  } catch (err) {
    if (!(err instanceof ServiceError) || err.code !== 'not_found') throw err;
    const producer = await deps.topology.workspaceByPublicId(tenant);
    if (producer) {
      for (const receiving of await deps.integrations.receivingWorkspaces(producer.id)) {
        if (await deps.auth.reaches(caller, receiving, 'read')) return producer;
      }
    }
    throw err;
  }
}

function catalogJson(item: CatalogItem) {
  return {
    publicId: item.publicId,
    key: item.name,
    name: item.name,
    description: item.description,
    eventTypes: item.eventTypes,
    payloadSchema: item.payloadSchema,
    status: item.status,
    packages: item.packages,
  };
}
