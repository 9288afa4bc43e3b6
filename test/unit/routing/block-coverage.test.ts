import t from 'tap';
import fc from 'fast-check';
import { BlockLedger, subscriptionStatus } from '../../../src/routing/block-coverage.js';

// docs/api.md#resources-and-states, the Subscription rows of the state table, one test each, plus
// §2 "a package block wins over the stream's other package memberships".
// `int` is the integration, `orders` the stream, `A`/`B` packages.

const ledger = (setup: (l: BlockLedger) => void = () => {}) => {
  const l = new BlockLedger();
  setup(l);
  return l;
};

t.test('a subscription nothing blocks is live', async (t) => {
  t.equal(ledger().status('int', 'orders'), 'live');
  t.equal(ledger((l) => l.addToPackage('A', 'orders')).status('int', 'orders'), 'live', 'being in a package changes nothing (default-open)');
});

t.test('live → block of its stream → paused', async (t) => {
  const l = ledger();
  l.blockStream('int', 'orders');
  t.equal(l.status('int', 'orders'), 'paused');
});

t.test('live → block of a package containing it → paused', async (t) => {
  const l = ledger((l) => l.addToPackage('A', 'orders'));
  l.blockPackage('int', 'A');
  t.equal(l.status('int', 'orders'), 'paused');
});

t.test('paused → un-block of the stream, not covered by a package block → live', async (t) => {
  const l = ledger((l) => {
    l.addToPackage('A', 'orders');
    l.blockStream('int', 'orders');
  });
  l.unblockStream('int', 'orders');
  t.equal(l.status('int', 'orders'), 'live');
});

t.test('paused → un-block of the stream while a package block still covers it → stays paused', async (t) => {
  const l = ledger((l) => {
    l.addToPackage('A', 'orders');
    l.blockStream('int', 'orders');
    l.blockPackage('int', 'A');
  });
  l.unblockStream('int', 'orders');
  t.equal(l.status('int', 'orders'), 'paused');
});

t.test('paused → un-block of the package, no block covers it any more → live', async (t) => {
  const l = ledger((l) => {
    l.addToPackage('A', 'orders');
    l.blockPackage('int', 'A');
  });
  l.unblockPackage('int', 'A');
  t.equal(l.status('int', 'orders'), 'live');
});

t.test('paused → un-block of the package while the stream block remains → stays paused', async (t) => {
  const l = ledger((l) => {
    l.addToPackage('A', 'orders');
    l.blockPackage('int', 'A');
    l.blockStream('int', 'orders');
  });
  l.unblockPackage('int', 'A');
  t.equal(l.status('int', 'orders'), 'paused');
});

t.test('paused → un-block of one package while another blocked package contains it → stays paused', async (t) => {
  const l = ledger((l) => {
    l.addToPackage('A', 'orders');
    l.addToPackage('B', 'orders');
    l.blockPackage('int', 'A');
    l.blockPackage('int', 'B');
  });
  l.unblockPackage('int', 'A');
  t.equal(l.status('int', 'orders'), 'paused');
  l.unblockPackage('int', 'B');
  t.equal(l.status('int', 'orders'), 'live', 'live once the last covering block is gone');
});

t.test('a stream in two packages, one blocked → paused (the package block wins)', async (t) => {
  const l = ledger((l) => {
    l.addToPackage('A', 'orders');
    l.addToPackage('B', 'orders');
  });
  l.blockPackage('int', 'A');
  t.equal(l.status('int', 'orders'), 'paused');
});

t.test('blocks and un-blocks are idempotent', async (t) => {
  const l = ledger((l) => l.addToPackage('A', 'orders'));
  l.blockStream('int', 'orders');
  l.blockStream('int', 'orders');
  l.unblockStream('int', 'orders');
  t.equal(l.status('int', 'orders'), 'live', 'one un-block undoes any number of identical blocks');
  l.unblockStream('int', 'orders');
  l.unblockPackage('int', 'A');
  t.equal(l.status('int', 'orders'), 'live', 'un-blocking what is not blocked changes nothing');
  l.blockPackage('int', 'A');
  l.blockPackage('int', 'A');
  l.unblockPackage('int', 'A');
  t.equal(l.status('int', 'orders'), 'live');
});

t.test('a block covers only its integration and its streams', async (t) => {
  const l = ledger((l) => {
    l.addToPackage('A', 'orders');
    l.blockPackage('int', 'A');
    l.blockStream('int', 'refunds');
  });
  t.equal(l.status('other', 'orders'), 'live', 'another integration is not affected');
  t.equal(l.status('int', 'invoices'), 'live', 'a stream outside the package is not affected');
  t.equal(l.status('int', 'refunds'), 'paused');
});

t.test('package membership changes move the status with them', async (t) => {
  const l = ledger((l) => l.blockPackage('int', 'A'));
  t.equal(l.status('int', 'orders'), 'live');
  l.addToPackage('A', 'orders');
  t.equal(l.status('int', 'orders'), 'paused', 'joining a blocked package pauses');
  l.removeFromPackage('A', 'orders');
  t.equal(l.status('int', 'orders'), 'live', 'leaving it resumes');
});

t.test('subscriptionStatus reads the facts directly', async (t) => {
  t.equal(subscriptionStatus({ streamBlocked: false, packagesOfStream: [], blockedPackages: new Set() }), 'live');
  t.equal(subscriptionStatus({ streamBlocked: true, packagesOfStream: [], blockedPackages: new Set() }), 'paused');
  t.equal(subscriptionStatus({ streamBlocked: false, packagesOfStream: ['A', 'B'], blockedPackages: new Set(['B']) }), 'paused');
  t.equal(subscriptionStatus({ streamBlocked: false, packagesOfStream: ['A'], blockedPackages: new Set(['B']) }), 'live');
});

t.test('property: a block never resumes, an un-block never pauses, and the end state depends only on which blocks exist', async (t) => {
  const op = fc.oneof(
    fc.record({ kind: fc.constantFrom('blockStream', 'unblockStream'), stream: fc.constantFrom('s1', 's2') }),
    fc.record({ kind: fc.constantFrom('blockPackage', 'unblockPackage'), pkg: fc.constantFrom('A', 'B') }),
  );
  fc.assert(
    fc.property(fc.array(op, { maxLength: 30 }), (ops) => {
      const l = ledger((l) => {
        l.addToPackage('A', 's1');
        l.addToPackage('B', 's1');
        l.addToPackage('B', 's2');
      });
      const blockedStreams = new Set<string>();
      const blockedPackages = new Set<string>();
      for (const o of ops) {
        const before = l.status('int', 's1');
        if ('stream' in o) {
          if (o.kind === 'blockStream') (l.blockStream('int', o.stream), blockedStreams.add(o.stream));
          else (l.unblockStream('int', o.stream), blockedStreams.delete(o.stream));
        } else if (o.kind === 'blockPackage') (l.blockPackage('int', o.pkg), blockedPackages.add(o.pkg));
        else (l.unblockPackage('int', o.pkg), blockedPackages.delete(o.pkg));
        const after = l.status('int', 's1');
        if (o.kind.startsWith('block') && before === 'paused' && after !== 'paused') return false;
        if (o.kind.startsWith('unblock') && before === 'live' && after !== 'live') return false;
      }
      const expected = blockedStreams.has('s1') || blockedPackages.has('A') || blockedPackages.has('B') ? 'paused' : 'live';
      return l.status('int', 's1') === expected;
    }),
  );
  t.pass('held for every generated sequence');
});
