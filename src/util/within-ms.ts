/**
 * `promise`, or a rejection once `ms` have passed without it settling (its
 * timer cleared either way). The promise itself runs on: a late rejection of
 * it is swallowed, since nobody awaits it any more.
 */
export function withinMs<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  promise.catch(() => {});
  return Promise.race([promise, late]).finally(() => clearTimeout(timer));
}
