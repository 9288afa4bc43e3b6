/**
 * What `POST /events/{tenant}/{queue}` (and its sandbox twin) answers with
 * 202: the schema the OpenAPI document shows (components.schemas Accepted)
 * and the type acceptedJson takes, so the document cannot drift from what
 * ingress sends (the OpenAPI test validates real answers against it).
 */
import Type, { type Static } from 'typebox';

export const AcceptedView = Type.Object(
  {
    eventId: Type.String({ pattern: '^evt_' }),
    replayed: Type.Optional(
      Type.Literal(true, { description: 'a duplicate Idempotency-Key within the queue\'s dedup window: the first event\'s id, nothing appended (absent otherwise)' }),
    ),
  },
  { title: 'Accepted', additionalProperties: false },
);

/**
 * The 202 body as JSON text, written by hand on the hot path. Event ids are
 * base64url after `evt_`: no JSON escaping needed.
 */
export function acceptedJson(answer: Static<typeof AcceptedView>): string {
  return answer.replayed === true ? `{"eventId":"${answer.eventId}","replayed":true}` : `{"eventId":"${answer.eventId}"}`;
}
