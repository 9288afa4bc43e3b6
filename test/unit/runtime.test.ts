import t from 'tap';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { satisfies } from '../../src/runtime/node-range.js';

/**
 * The suite runs on a Node the project supports (package.json engines), and
 * the places that each decide "supported" agree: the launcher (src/cli.ts,
 * via node-range.ts), config/runtime/lib.sh (npm start/test and the
 * launcher's fetch), its pinned Node 24 versions and docker-compose's image.
 */
const root = new URL('../../', import.meta.url);
const engines = (JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { engines: { node: string } }).engines.node;
const SAMPLES = ['18.20.8', '20.12.0', '20.20.2', '22.0.0', '22.21.9', '22.22.0', '22.30.1', '23.11.0', '24.0.0', '24.21.0', '25.2.1', '26.12.1'];

t.test('the suite runs on a Node in the engines range (npm test brings Node 24 when the system one is older)', async (t) => {
  t.ok(satisfies(process.versions.node, engines), `node ${process.version} (${process.execPath}) in ${engines}`);
});

t.test('engines: 22.22+ on the 22 line, or 24 and later', async (t) => {
  t.same(
    SAMPLES.filter((v) => satisfies(v, engines)),
    ['22.22.0', '22.30.1', '24.0.0', '24.21.0', '25.2.1', '26.12.1'],
  );
});

t.test('node-range reads the engines syntax npm does, and refuses what it cannot read', async (t) => {
  t.ok(satisfies('v20.12.0', '>=20.12'));
  t.notOk(satisfies('20.11.9', '>=20.12'));
  t.ok(satisfies('20.19.0', '>=20.12 <21'));
  t.notOk(satisfies('21.0.0', '>= 20.12 < 21'));
  t.ok(satisfies('24.1.9', '~24.1'));
  t.notOk(satisfies('24.2.0', '~24.1'));
  t.ok(satisfies('0.4.9', '^0.4.1'));
  t.notOk(satisfies('0.5.0', '^0.4.1'));
  t.ok(satisfies('24.21.0', '=24.21.0'));
  t.notOk(satisfies('24.21.0', '>24.21.0'));
  t.ok(satisfies('24.21.0', '<=24.21.0'));
  t.ok(satisfies('24.0.0-pre', '>=24'), 'a pre-release suffix is ignored');
  t.throws(() => satisfies('24.0.0', '>=24 || 1.x'), /not a version/);
  t.throws(() => satisfies('24.0.0', 'latest'), /not a version/);
  t.throws(() => satisfies('24.0.0', '24'), /partial version/);
  t.throws(() => satisfies('24.0.0', '>=22 ||'), /empty alternative/);
});

t.test('config/runtime (npm start, npm test, the launcher\'s fetch) draws the line where engines does', async (t) => {
  const script = fileURLToPath(new URL('config/runtime/node.sh', root));
  const bash = SAMPLES.filter((v) => spawnSync('bash', [script, '--supports', v]).status === 0);
  t.same(bash, SAMPLES.filter((v) => satisfies(v, engines)));
});

t.test('the pinned Node versions that config/runtime fetches are in range', async (t) => {
  const lib = readFileSync(new URL('config/runtime/lib.sh', root), 'utf8');
  const pins = [...lib.matchAll(/^\s+[a-z]+-[a-z0-9]+\) echo "(\d+\.\d+\.\d+) [0-9a-f]{128}"/gm)].map((m) => m[1]!);
  t.ok(pins.length >= 2, `pins found: ${pins.join(', ')}`);
  for (const pin of pins) t.ok(satisfies(pin, engines), `${pin} in ${engines}`);
});

t.test("docker-compose's streamgate image is a Node in range", async (t) => {
  const compose = parse(readFileSync(new URL('docker-compose.yml', root), 'utf8')) as { services: Record<string, { image?: string }> };
  const image = compose.services.streamgate?.image ?? '';
  const major = /^node:(\d+)(?:[-.]|$)/.exec(image)?.[1];
  t.ok(major && satisfies(`${major}.0.0`, engines), `${image} in ${engines}`);
});
