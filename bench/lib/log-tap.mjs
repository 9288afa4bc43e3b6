import { createWriteStream } from 'node:fs';
import { createInterface } from 'node:readline';

const LEVELS = { 10: 'trace', 20: 'debug', 30: 'info', 40: 'warn', 50: 'error', 60: 'fatal' };

/**
 * Keeps a child's output: all of it in a file (for digging afterwards) and, in
 * memory, a count of each distinct warn/error message with one example, so the
 * report can say "the service logged X 37 times" instead of hiding it.
 * streamgate logs pino JSON on stdout; stderr lines (crash traces) count as
 * problems, other non-JSON stdout lines are listed separately.
 */
export function tapLogs(child, file) {
  const out = createWriteStream(file, { flags: 'a' });
  const messages = new Map(); // "level: msg" -> { count, example }
  let lines = 0;
  const plain = []; // non-JSON stdout lines (first few)
  const record = (key, line) => {
    const entry = messages.get(key);
    if (entry) entry.count++;
    else messages.set(key, { count: 1, example: line.slice(0, 500) });
  };
  const onLine = (stream) => (line) => {
    lines++;
    out.write(`${line}\n`);
    if (stream === 'stderr') return record(`stderr: ${line.slice(0, 120)}`, line);
    let parsed;
    try {
      parsed = JSON.parse(line);
    } catch {
      // The CLI prints a plain-text banner on stdout next to its JSON logs; kept
      // apart from warnings, but shown, since it is not JSON for a log pipeline.
      if (plain.length < 20) plain.push(line.slice(0, 300));
      return;
    }
    if (parsed.level >= 40) record(`${LEVELS[parsed.level] ?? parsed.level}: ${parsed.msg}`, line);
  };
  createInterface({ input: child.stdout }).on('line', onLine('stdout'));
  createInterface({ input: child.stderr }).on('line', onLine('stderr'));
  child.once('exit', () => out.end());
  return {
    file,
    get lines() {
      return lines;
    },
    /** Non-JSON lines on stdout (not counted as problems). */
    plain: () => plain,
    /** [{ key, count, example }], most frequent first. */
    problems() {
      return [...messages].map(([key, v]) => ({ key, ...v })).sort((a, b) => b.count - a.count);
    },
  };
}
