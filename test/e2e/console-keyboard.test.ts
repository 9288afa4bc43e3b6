import t from 'tap';
import { ConsoleTab, startBrowser } from '../helpers/browser.js';
import { checkTab, startConsoleNode } from '../helpers/console-e2e.js';

declare const document: any, getComputedStyle: any; // in page.evaluate callbacks (no DOM lib here)

// The console with the keyboard alone: Tab reaches every control of the
// sign-in form in reading order, each focused control shows a focus ring,
// Enter signs in, and the License Home tabs and workspace link are reached and
// followed with Tab and Enter.
t.test('keyboard only: sign in, move between tabs, open a workspace', async (t) => {
  const { creds, base, T } = await startConsoleNode(t);
  const browser = await startBrowser(t);
  const tab = await ConsoleTab.open(await browser.createBrowserContext(), base, 'keyboard');
  const page = tab.page;
  await tab.go();
  await tab.waitText('License ID');

  /** The focused element: its label (or text) and whether a focus ring is drawn. */
  const focused = () =>
    page.evaluate(() => {
      const el = document.activeElement;
      const style = getComputedStyle(el);
      const label = el.id ? document.querySelector(`label[for="${el.id}"]`)?.textContent?.trim() : null;
      return { name: label ?? el.textContent?.trim() ?? '', tag: el.tagName.toLowerCase(), ring: style.outlineStyle !== 'none' && parseFloat(style.outlineWidth) >= 2 };
    });
  /** Presses Tab until the focus is on `name` (at most `max` presses); what was focused on the way. */
  const tabTo = async (name: string, max = 15) => {
    const seen: string[] = [];
    for (let i = 0; i < max; i++) {
      await page.keyboard.press('Tab');
      const f = await focused();
      seen.push(f.name);
      if (f.name === name) return { ...f, seen };
    }
    throw new Error(`Tab never reached ${JSON.stringify(name)}; it went through ${JSON.stringify(seen)}`);
  };

  const license = await tabTo('License ID');
  t.equal(license.tag, 'input', 'Tab reaches the License ID field');
  t.ok(license.ring, 'the focused field shows a focus ring');
  await page.keyboard.type(creds.licensePublicId);
  await page.keyboard.press('Tab');
  const key = await focused();
  t.equal(key.name, 'API key', 'the next Tab is the API key field');
  await page.keyboard.type(creds.buildKey);
  await page.keyboard.press('Tab');
  const button = await focused();
  t.same([button.name, button.tag, button.ring], ['Sign in', 'button', true], 'then the Sign in button, with its focus ring');
  await tab.shoot('focus-sign-in');
  await page.keyboard.press('Enter');
  await tab.waitText(T);
  t.pass('Enter on the button signed in');

  const keysTab = await tabTo('API keys');
  t.ok(keysTab.ring, 'the API keys tab shows a focus ring');
  await page.keyboard.press('Enter');
  await tab.waitText('Create an API key');
  t.pass('Enter opens the API keys tab');
  await tab.shoot('focus-api-keys');

  const workspaces = await tabTo('Workspaces', 40);
  await page.keyboard.press('Enter');
  await tab.waitText(T);
  const link = await tabTo('default', 20);
  t.equal(link.tag, 'a', 'the workspace is a real link');
  await page.keyboard.press('Enter');
  await tab.waitText('Queues');
  t.ok(workspaces.ring && link.ring, 'every control reached showed its focus ring');
  await tab.shoot('focus-workspace');
  checkTab(t, tab, [{ path: '/console/api/session', status: 401 }]);
});
