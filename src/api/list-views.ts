/**
 * The list answers' wrappers: `{ data: [...] }`, `{ items: [...] }` and the
 * paginated `{ items: [...], nextCursor }`, each a titled answer schema
 * (components.schemas QueueList, TargetList, …) whose items are the item's own
 * schema. The handlers type their answers with Static<typeof …List>.
 */
import Type, { type TSchema } from 'typebox';
import { nullable } from '../schema/schema-kit.js';

/** `{ data: [Item] }` (the keys', signing keys' and /waas lists). */
export function dataOf<T extends TSchema>(item: T, title: string) {
  return Type.Object({ data: Type.Array(item) }, { title, additionalProperties: false });
}

/** `{ items: [Item] }` (the topology lists). */
export function itemsOf<T extends TSchema>(item: T, title: string) {
  return Type.Object({ items: Type.Array(item) }, { title, additionalProperties: false });
}

/** `{ items: [Item], nextCursor }`: one page of a keyset-paginated list. */
export function pageOf<T extends TSchema>(item: T, title: string) {
  return Type.Object(
    { items: Type.Array(item), nextCursor: nullable(Type.String({ description: "null on the last page; else the next page's cursor, to send as it is" })) },
    { title, additionalProperties: false },
  );
}
