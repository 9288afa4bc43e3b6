import { existsSync, mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import { gzipSync } from 'node:zlib';
import puppeteer, { type Browser, type BrowserContext, type HTTPResponse, type Page } from 'puppeteer-core';
import type { Test } from 'tap';

// Browser globals, for the callbacks page.evaluate runs in the page (the tests
// compile without the DOM lib, which would retype Node's fetch and timers).
/* eslint-disable @typescript-eslint/no-explicit-any */
declare const document: any, location: any, localStorage: any, sessionStorage: any, indexedDB: any, history: any, Event: any;

/**
 * Debian's Chromium, driven headless with puppeteer-core (no browser download
 * is possible here: test/run.sh installs the `chromium` package when missing).
 */
export const CHROMIUM = process.env.STREAMGATE_CHROMIUM ?? '/usr/bin/chromium';

export const WIDTHS = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;

/** Screenshots of every page at both widths go under tap's output folder. */
const SHOTS = join(process.cwd(), '.tap', 'screenshots');

/** One browser per test file (each user gets a context of their own); closed when the test ends. */
export async function startBrowser(t: Test): Promise<Browser> {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: install Debian's chromium package (test/run.sh does)`);
  const browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // --no-sandbox: the suite runs as root in a container, where Chromium's sandbox cannot start.
    args: ['--no-sandbox', '--disable-dev-shm-usage', '--disable-gpu', '--no-first-run', '--no-default-browser-check', '--disable-extensions', '--lang=en-US'],
    defaultViewport: WIDTHS.desktop,
  });
  t.teardown(() => browser.close());
  return browser;
}

export interface Refusal {
  url: string;
  status: number;
}

/**
 * A page of the console as one user sees it, recording what the browser
 * reports: console errors and uncaught exceptions (any is a failure), answers
 * of 400 and more (each must be one the test expects), and every URL requested
 * (none may carry a credential).
 */
export class ConsoleTab {
  readonly errors: string[] = [];
  readonly refusals: Refusal[] = [];
  readonly requestedUrls: string[] = [];
  readonly responses: HTTPResponse[] = [];
  /** Milliseconds spent per helper (go, click, shoot…), printed by checkTab to keep the run short. */
  readonly spent: Record<string, number> = {};

  readonly page: Page;
  readonly base: string;
  readonly shotDir: string;
  private constructor(
    page: Page,
    base: string,
    shotDir: string,
  ) {
    this.page = page;
    this.base = base;
    this.shotDir = shotDir;
    page.on('console', (msg) => {
      // Chrome reports every answer >= 400 as a console error; those are checked as refusals instead.
      if (msg.type() === 'error' && !msg.text().startsWith('Failed to load resource')) this.errors.push(`console: ${msg.text()}`);
    });
    page.on('pageerror', (err) => this.errors.push(`uncaught: ${err instanceof Error ? err.message : String(err)}`));
    page.on('request', (req) => this.requestedUrls.push(req.url()));
    page.on('response', (res) => {
      this.responses.push(res);
      if (res.status() >= 400) this.refusals.push({ url: res.url(), status: res.status() });
    });
    page.on('dialog', (d) => void d.accept());
  }

  static async open(context: Browser | BrowserContext, base: string, name: string): Promise<ConsoleTab> {
    const page = await context.newPage();
    const dir = join(SHOTS, basename(process.argv[1] ?? 'test', '.test.ts'), name);
    mkdirSync(dir, { recursive: true });
    return new ConsoleTab(page, base, dir);
  }

  /** Opens /console/ + hash and waits until the app rendered something other than "Loading…". */
  async go(hash = ''): Promise<void> {
    const start = Date.now();
    await this.page.goto(`${this.base}/console/${hash}`, { waitUntil: 'networkidle0' });
    await this.settled();
    this.spent.go = (this.spent.go ?? 0) + Date.now() - start;
  }

  /** Waits until no "Loading…" is on the page and the network is quiet. */
  async settled(): Promise<void> {
    await this.page.waitForFunction(() => !document.body.innerText.includes('Loading…'), { timeout: 10_000 });
    await this.page.waitForNetworkIdle({ idleTime: 60, timeout: 10_000 }).catch(() => undefined);
  }

  text(): Promise<string> {
    return this.page.evaluate(() => document.body.innerText);
  }

  /** Waits until the page's text contains `needle`. */
  async waitText(needle: string, timeout = 10_000): Promise<void> {
    await this.page.waitForFunction((n: string) => document.body.innerText.includes(n), { timeout }, needle).catch(async () => {
      throw new Error(`the page never showed ${JSON.stringify(needle)}; it shows:\n${(await this.text()).slice(0, 2000)}`);
    });
  }

  /** Sets the value of the input labelled `label`, as typing would (an input event the app listens to). */
  async fill(label: string, value: string): Promise<void> {
    await this.fillId(await this.idOfLabel(label), value);
  }

  /** Sets the value of the element with this id, as typing would. */
  async fillId(id: string, value: string): Promise<void> {
    const sel = `#${CSS_ESCAPE(id)}`;
    await this.page.waitForSelector(sel, { timeout: 10_000 });
    await this.page.$eval(sel, (el: any, v: string) => {
      el.focus();
      el.value = v;
      el.dispatchEvent(new Event('input', { bubbles: true }));
    }, value);
  }

  async select(label: string, value: string): Promise<void> {
    await this.page.select(`#${CSS_ESCAPE(await this.idOfLabel(label))}`, value);
  }

  private async idOfLabel(label: string): Promise<string> {
    const id = await this.page.evaluate((l: string) => {
      const found = [...document.querySelectorAll('label')].find((x: any) => x.textContent?.trim() === l);
      return found?.htmlFor ?? null;
    }, label);
    if (!id) throw new Error(`no field labelled ${JSON.stringify(label)}`);
    return id;
  }

  /** Clicks the button or link whose visible text is `label` (the first enabled one, or within `scope`). */
  async click(label: string, scope = 'body'): Promise<void> {
    const handle = await this.page.evaluateHandle((l: string, s: string) => {
      const root = document.querySelector(s) ?? document.body;
      return [...root.querySelectorAll('button, a')].find((el: any) => el.textContent?.trim() === l && !el.disabled) ?? null;
    }, label, scope);
    const el = handle.asElement();
    if (!el) throw new Error(`no enabled button or link ${JSON.stringify(label)} in ${scope}; the page shows:\n${(await this.text()).slice(0, 1500)}`);
    const start = Date.now();
    await el.click();
    await this.settled();
    this.spent.click = (this.spent.click ?? 0) + Date.now() - start;
  }

  /** Whether every button labelled `label` on the page is disabled (and there is at least one). */
  async allDisabled(label: string): Promise<boolean> {
    return this.page.evaluate((l: string) => {
      const els = [...document.querySelectorAll('button')].filter((el: any) => el.textContent?.trim() === l);
      return els.length > 0 && els.every((el: any) => el.disabled);
    }, label);
  }

  /** Screenshots at 1280×800 and 390 px wide, then back to the desktop size. */
  async shoot(name: string): Promise<void> {
    const start = Date.now();
    for (const [w, vp] of Object.entries(WIDTHS)) {
      await this.page.setViewport(vp);
      await this.page.screenshot({ path: join(this.shotDir, `${name}-${w}.png`) as `${string}.png`, fullPage: true });
    }
    await this.page.setViewport(WIDTHS.desktop);
    this.spent.shoot = (this.spent.shoot ?? 0) + Date.now() - start;
  }

  /** What the browser keeps: local/session storage, IndexedDB names, the URL and script-visible cookies. */
  async kept(): Promise<string> {
    return this.page.evaluate(async () => {
      const dbs = 'databases' in indexedDB ? await indexedDB.databases() : [];
      return JSON.stringify({
        local: { ...localStorage },
        session: { ...sessionStorage },
        indexedDB: dbs.map((d: any) => d.name),
        url: location.href,
        cookie: document.cookie,
        history: history.length,
      });
    });
  }

  /** Gzipped bytes of every answer the browser got so far (what a first visit costs). */
  async gzippedBytes(): Promise<number> {
    let total = 0;
    for (const res of this.responses) {
      if (res.request().resourceType() === 'fetch' || res.status() >= 300) continue;
      total += gzipSync(await res.buffer()).length;
    }
    return total;
  }
}

function CSS_ESCAPE(id: string): string {
  return id.replace(/([^\w-])/g, '\\$1');
}
