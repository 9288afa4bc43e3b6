/**
 * A package's key: a slug of its name (docs/api.md#resources-and-states), lower-case ASCII
 * letters, digits and single dashes, at most 64 characters. Accents are
 * folded ("Données" → "donnees"); a name with nothing usable gives "package".
 */
export function slugify(name: string): string {
  const slug = name
    .normalize('NFKD')
    .replace(/[\u0300-\u036f]/g, '')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 64)
    .replace(/-+$/, '');
  return slug || 'package';
}
