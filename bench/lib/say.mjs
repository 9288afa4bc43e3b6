/** Progress lines on stderr (stdout carries the report), and a cross-process clock. */
export const say = (msg) => process.stderr.write(`[bench] ${msg}\n`);

/** Wall-clock ms with sub-ms precision, comparable with the receiver's timestamps. */
export const now = () => performance.timeOrigin + performance.now();
