import t from 'tap';
import { Writable } from 'node:stream';
import pino from 'pino';
import { closeInReverse } from '../../../src/node/close-in-reverse.js';

function capture(): { log: pino.Logger; lines: Array<{ level: number; msg: string; closer?: string }> } {
  const lines: Array<{ level: number; msg: string; closer?: string }> = [];
  const stream = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { log: pino({ level: 'warn' }, stream), lines };
}

t.test('last opened closes first; a closer that hangs is left behind and named, one that throws is logged, the rest still close', async (t) => {
  const { log, lines } = capture();
  const order: string[] = [];
  const closers = [
    () => void order.push('pool'),
    () => {
      order.push('throws');
      throw new Error('boom');
    },
    () => new Promise<void>(() => order.push('hangs')),
    async () => void order.push('listener'),
  ];
  const started = Date.now();
  await closeInReverse(closers, 200, log);
  const took = Date.now() - started;
  t.same(order, ['listener', 'hangs', 'throws', 'pool'], 'reverse order, none skipped');
  t.ok(took >= 190 && took < 2_000, `returned after the hanging one's wait (${took} ms)`);
  t.equal(closers.length, 0, 'the list is emptied (a second stop closes nothing twice)');
  const late = lines.find((l) => l.msg.includes('did not close in time'));
  t.match(late?.closer, /new Promise/, 'the hanging closer is named');
  t.ok(lines.some((l) => l.msg === 'error while closing'), 'the throwing one is logged');
});
