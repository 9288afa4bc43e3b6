import Type, { type Static } from 'typebox';
import type { Router } from '../../http/router.js';
import { StreamConflict, type CatalogItem, type StreamInput as StreamState } from '../../storage/waas-catalog-repo.js';
import type { WorkspaceRow } from '../../storage/topology-repo.js';
import { ServiceError } from '../../errors.js';
import type { Exchange } from '../../http/exchange.js';
import { compileBody } from '../../schema/body-validator.js';
import { closed, maybe, withProblem } from '../../schema/schema-kit.js';
import { checkBody } from '../json-body.js';
import type { CatalogEntryListView, CatalogEntryView, ProducerEnabledView, StreamAppliedView } from './waas-views.js';
import { param, publicIdString, published, readBody, STREAM_NAME, writer, type WaasDeps } from './waas-context.js';

/** No C0, DEL or C1 control character (one or more characters). */
const NO_CONTROL = '^[^\\u0000-\\u001f\\u007f-\\u009f]+$';

/**
 * The body of `PUT /waas/streams`: the desired state of one stream of the
 * producer (declarative: applying it twice changes nothing the second time).
 */
export const StreamInput = closed(
  {
    producerTenantPublicId: publicIdString('tenant'),
    name: Type.String({ pattern: STREAM_NAME.source, description: "The stream's key, also the name of its queue (the /v1 queue naming rule)." }),
    description: maybe(Type.String({ maxLength: 4000 })),
    eventTypes: maybe(
      Type.Array(withProblem(Type.String({ minLength: 1, maxLength: 255, pattern: NO_CONTROL }), 'must be a string of 1-255 characters without control characters'), {
        maxItems: 1000,
        uniqueItems: true,
      }),
    ),
    // Opaque (rule 4): any string, kept exactly as sent. No bound of its own: the body limit bounds it.
    payloadSchema: maybe(Type.String()),
    isPublic: maybe(Type.Boolean({ description: 'true: Published (in the catalog); false or absent: Deprecated.' })),
  },
  { title: 'StreamInput', description: 'The desired state of one stream of the producer; applying the same body again changes nothing.' },
);
const checkStream = compileBody(StreamInput);

/** The body of `POST /waas/enable-producer`. */
export const EnableProducerInput = closed({ producerTenantPublicId: publicIdString('tenant') }, { title: 'EnableProducerInput', description: 'The workspace to make a producer.' });
const checkEnableProducer = compileBody(EnableProducerInput);

/**
 * Streams and the catalog (docs/api.md): the declarative PUT /waas/streams,
 * POST /waas/enable-producer, and the catalog of published streams.
 */
export function registerWaasStreams(router: Router, deps: WaasDeps): void {
  const opts = { maxBodyBytes: deps.maxBodyBytes };

  router.add('put', '/waas/streams', { ...opts, body: checkStream }, async (ex) => {
    const caller = await writer(deps, ex);
    const { tenant, input } = readStream(await readBody(ex));
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
    const answer: Static<typeof StreamAppliedView> = { publicId: entry.publicId, key: entry.name, status: entry.status };
    ex.send(200, JSON.stringify(answer), {
      'content-type': 'application/json',
      'x-streamgate-change': changed ? 'changed' : 'unchanged',
    });
  });

  router.add('post', '/waas/enable-producer', { ...opts, body: checkEnableProducer }, async (ex) => {
    const caller = await writer(deps, ex);
    const { producerTenantPublicId: tenant } = checkBody(await readBody(ex), checkEnableProducer);
    const ws = await deps.auth.waasWorkspace(caller, tenant, 'write');
    if (await deps.catalog.enableProducer(ws.id)) await published(deps);
    const answer: Static<typeof ProducerEnabledView> = { tenantPublicId: ws.publicId, isProducer: true };
    ex.sendJson(200, answer);
  });

  router.add('get', '/waas/producer/:tenant/catalog', opts, async (ex) => {
    const ws = await catalogReader(deps, ex, param(ex, 0));
    const items = await deps.catalog.published(ws.id);
    const answer: Static<typeof CatalogEntryListView> = { data: items.map(catalogJson) };
    ex.sendJson(200, answer);
  });
}

/** A valid `PUT /waas/streams` body: the producer it is for, and the stream's desired state. */
export function readStream(body: unknown): { tenant: string; input: StreamState } {
  const input = checkBody(body, checkStream);
  return {
    tenant: input.producerTenantPublicId,
    input: {
      name: input.name,
      description: input.description ?? '',
      eventTypes: input.eventTypes ?? [],
      payloadSchema: input.payloadSchema ?? null,
      status: input.isPublic === true ? 'Published' : 'Deprecated',
    },
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

function catalogJson(item: CatalogItem): Static<typeof CatalogEntryView> {
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
