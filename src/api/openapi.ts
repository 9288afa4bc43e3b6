import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';

// The document lives beside its source (tsc does not copy YAML): resolve it
// from the package root whether this runs from src/ or dist/.
const DOCUMENT = fileURLToPath(new URL('../../src/api/openapi.yaml', import.meta.url));

/** The OpenAPI document as JSON text, read once. */
export function openApiJson(): string {
  return JSON.stringify(parse(readFileSync(DOCUMENT, 'utf8')));
}

/** `/v1/tenants/:tenant/queues/:name` → `/v1/tenants/{tenant}/queues/{name}`. */
export function toOpenApiPath(pattern: string): string {
  return pattern.replace(/:([A-Za-z]\w*)/g, '{$1}');
}
