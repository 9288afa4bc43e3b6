import t from 'tap';
import { ConsoleTab, startBrowser } from '../helpers/browser.js';
import { checkTab, signInWithKey, startConsoleNode } from '../helpers/console-e2e.js';
import { startReceiver } from '../helpers/receiver.js';

declare const document: any; // in page.evaluate callbacks (no DOM lib here)

/** The figure shown for `id` (accepted, delivered, retrying, failed, p50, p99), once it equals `value`. */
async function figureBecomes(tab: ConsoleTab, id: string, value: string, timeout = 30_000): Promise<void> {
  await tab.page.waitForFunction(
    (sel: string, v: string) => document.querySelector(sel)?.textContent?.trim() === v,
    { timeout },
    `[data-testid="figure-${id}"]`,
    value,
  ).catch(async () => {
    throw new Error(`figure ${id} never showed ${value}; the page shows:\n${(await tab.text()).slice(0, 1500)}`);
  });
}

/** Coloured pixels of the chart's canvas: uPlot drew lines into it. */
function drawnPixels(tab: ConsoleTab, testid: string): Promise<number> {
  return tab.page.evaluate((id: string) => {
    const canvas = document.querySelector(`[data-testid="${id}"] canvas`);
    if (!canvas || canvas.width === 0) return 0;
    const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    let n = 0;
    // Neither transparent nor grey (axes and grid are grey; the series are coloured).
    for (let i = 0; i < data.length; i += 4) {
      const [r, g, b, a] = [data[i], data[i + 1], data[i + 2], data[i + 3]];
      if (a > 0 && Math.max(r, g, b) - Math.min(r, g, b) > 60) n++;
    }
    return n;
  }, testid);
}

// A workspace just made has no traffic: its overview (the landing page of a
// workspace) says how to send a first event. Then events flow to two queues,
// a receiver answering 200, 500-then-200 and 410, and the same page, without
// a reload, counts them, draws the charts and splits the attempts by outcome.
t.test('the overview of a workspace without traffic, then with it', async (t) => {
  const { creds, base, api, T } = await startConsoleNode(t);
  const receiver = await startReceiver(t);
  const seen = new Map<string, number>();
  receiver.responder = (req, res) => {
    const body = req.body.toString();
    const n = (seen.get(body) ?? 0) + 1;
    seen.set(body, n);
    if (body.startsWith('{"gone"')) res.statusCode = 410;
    else if (body.startsWith('{"flaky"') && n === 1) res.statusCode = 500;
    res.end();
  };
  const browser = await startBrowser(t);
  const tab = await ConsoleTab.open(browser, base, 'owner');
  await signInWithKey(tab, creds.licensePublicId, creds.buildKey, T);

  // The workspace's link on Home opens its overview; no traffic yet: the empty state.
  await tab.click('default');
  await tab.page.waitForSelector('[data-testid="overview-empty"]');
  t.match(await tab.text(), 'No traffic in the last 1h', 'the empty state names the window');
  t.match(await tab.text(), 'no queue yet', 'and that a queue is needed first');
  const curl = await tab.page.$eval('[data-testid="first-event-curl"]', (el: any) => el.textContent);
  t.match(curl, `curl -X POST '${base}/events/${T}/QUEUE'`, 'a curl line with the workspace\'s ingress URL');
  t.match(curl, 'x-api-key', 'and where the key goes');
  t.equal(await tab.page.$('[data-testid="chart-events"]'), null, 'no empty charts');
  await tab.shoot('overview-empty');

  // Queues made meanwhile (elsewhere): the open page's curl line names one at its next poll.
  await api.wire('orders', 'orders-hook', `${receiver.url}/orders`);
  await api.wire('refunds', 'refunds-hook', `${receiver.url}/refunds`);
  await tab.page.waitForFunction(
    (needle: string) => document.querySelector('[data-testid="first-event-curl"]')?.textContent?.includes(needle),
    { timeout: 15_000 },
    `${base}/events/${T}/orders'`,
  );
  t.notMatch(await tab.text(), 'no queue yet', 'the hint to make a queue is gone');

  // Traffic, while the page stays open: 6 orders (2 answered 500 once), 2 refunds (one answered 410).
  for (let i = 0; i < 4; i++) t.equal((await api.postEvent('orders', `{"ok":${i}}`)).status, 202);
  for (let i = 0; i < 2; i++) t.equal((await api.postEvent('orders', `{"flaky":${i}}`)).status, 202);
  t.equal((await api.postEvent('refunds', '{"ok":"r"}')).status, 202);
  await receiver.waitFor((rs) => rs.some((r) => r.body.toString() === '{"ok":"r"}'), 30_000, 'the refund');
  t.equal((await api.postEvent('refunds', '{"gone":1}')).status, 202);
  await tab.page.waitForSelector('[data-testid="overview-figures"]', { timeout: 30_000 });
  await figureBecomes(tab, 'accepted', '8');
  await figureBecomes(tab, 'delivered', '7');
  await figureBecomes(tab, 'failed', '1');
  await figureBecomes(tab, 'retrying', '2');
  t.match(await tab.page.$eval('[data-testid="figure-p50"]', (el: any) => el.textContent), /^\d+(\.\d)? m?s$/, 'a p50 latency');
  t.ok(await drawnPixels(tab, 'chart-events') > 50, 'the events chart is drawn');
  t.ok(await drawnPixels(tab, 'chart-latency') > 10, 'the latency chart is drawn');
  const shares = async (cls: string) => tab.page.$eval(`[data-testid="share-${cls}"]`, (el: any) => el.textContent.replace(/\s+/g, ' ').trim());
  t.equal(await shares('2xx'), '2xx: 70.0 % (7)', '7 of 10 attempts answered 2xx');
  t.equal(await shares('5xx'), '5xx: 20.0 % (2)');
  t.equal(await shares('4xx'), '4xx: 10.0 % (1)');
  t.match(await tab.page.$eval('[data-testid="overview-queues"]', (el: any) => el.innerText), /orders\t6\t6\t2\t0/, 'each queue in the table');
  await tab.shoot('overview-traffic');

  // One queue, then the 24 h window.
  await tab.select('Queue', 'refunds');
  await figureBecomes(tab, 'accepted', '2', 10_000);
  await figureBecomes(tab, 'delivered', '1', 10_000);
  t.equal(await shares('4xx'), '4xx: 50.0 % (1)', 'the 410 is half of the queue\'s attempts');
  await tab.shoot('overview-queue');
  await tab.select('Queue', '');
  await tab.click('24h');
  await figureBecomes(tab, 'accepted', '8', 10_000);
  t.match(await tab.text(), 'per 10 min', 'the 24 h window in 10-minute steps');
  await tab.shoot('overview-24h');

  checkTab(t, tab, [{ path: '/console/api/session', status: 401 }]);
});
