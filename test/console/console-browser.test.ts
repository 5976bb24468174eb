import type { Browser, Locator, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { backgroundLoad } from '../helpers/background-load.js';
import { consoleUrl, launchChromium, logIn, screenshot } from '../helpers/browser.js';
import { FAILING_JOBS_API } from '../helpers/failing-jobs-api.js';
import { eventually, startInstance, TEST_KEY, type TestInstance } from '../helpers/instance.js';
import { tarGz } from '../helpers/tarball.js';

// Issue 26: the operator console in a real browser (the system's Chromium through playwright-core):
// logging in, live figures under load, a rollback with the button, a 5xx in the live log tail, job
// actions, and the Content-Security-Policy refusing an inline script. Screenshots go to a temp folder (helpers/browser.ts).

const SHOP = (release: string) => `key: shop
endpoints:
  get /hello:
    Reply: { directive: ModifyMessage, body: { release: ${release} } }
  get /fail:
    Fail: { directive: ThrowError, status: 503, message: the warehouse is not answering }
after:
  Log: { directive: Log, groups: [AFTER_FLOW] }
`;
const PING = (key: string) => `key: ${key}\nendpoints:\n  get /ping:\n    Ping: { directive: Ping }\n`;

let anvil: TestInstance;
let browser: Browser;
let page: Page;
let firstRelease: string;
let secondRelease: string;
const pageErrors: string[] = [];

beforeAll(async () => {
  anvil = await startInstance({
    apis: {
      shop: { 'api.yaml': SHOP('one') },
      busy: { 'api.yaml': PING('busy') },
      catalog: { 'api.yaml': PING('catalog') },
      search: { 'api.yaml': PING('search') },
      worker: { 'api.yaml': FAILING_JOBS_API },
    },
    args: ['--job-backoff', '20ms'],
  });
  firstRelease = (await anvil.admin('/anvil/api/shop')).json().release;
  const deployed = await anvil.admin('/anvil/api', {
    method: 'POST',
    body: tarGz({ 'api.yaml': SHOP('two') }),
    headers: { 'content-type': 'application/gzip' },
  });
  expect(deployed.status).toBe(201);
  secondRelease = deployed.json().release;
  expect((await anvil.request('/shop/hello')).json()).toEqual({ release: 'two' });

  browser = await launchChromium();
  const context = await browser.newContext({ viewport: { width: 1440, height: 900 } });
  page = await context.newPage();
  page.on('pageerror', (error) => pageErrors.push(error.message));
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await anvil?.dispose();
});

/** An attribute of every element the locator finds, in order, read at one moment (rows are replaced as the page updates). */
function attributes(found: Locator, name: string): Promise<Array<string | null>> {
  // Runs in the page; `any`: the tests are type-checked without the DOM's types.
  return found.evaluateAll(
    (elements: any[], attribute: string) => elements.map((e) => e.getAttribute(attribute)),
    name,
  );
}

/** Waits until the figure in `cell` (as the console formats it) satisfies `wanted`; returns it. */
async function figure(cell: Locator, wanted: (value: number) => boolean, timeoutMs = 20_000): Promise<number> {
  return eventually(async () => {
    const value = Number((await cell.textContent())?.replace(/,/g, ''));
    return Number.isFinite(value) && wanted(value) ? { value } : null;
  }, timeoutMs).then((found) => found.value);
}

describe('the operator console', () => {
  it('says plainly when the key is wrong, and keeps nothing', async () => {
    await logIn(page, anvil, 'not-the-key');
    const error = page.locator('#login-error');
    await error.waitFor({ state: 'visible' });
    expect(await error.textContent()).toContain(
      'Wrong public host or key: the admin host answered 401 Unauthorized for public host "localhost"',
    );
    expect(await page.evaluate('sessionStorage.length')).toBe(0);
    expect(await page.locator('#nav').isHidden()).toBe(true);
    await screenshot(page, 'login');
  });

  it('logs in with the public host and its key, kept in sessionStorage, and lists the APIs', async () => {
    await logIn(page, anvil);
    await page.locator('#api-rows tr[data-key="shop"]').waitFor();
    expect(await page.evaluate("JSON.parse(sessionStorage.getItem('anvil.console.credentials'))")).toEqual({
      host: 'localhost',
      key: TEST_KEY,
    });
    expect(await attributes(page.locator('#api-rows tr'), 'data-key')).toEqual([
      'busy',
      'catalog',
      'search',
      'shop',
      'worker',
    ]);
    expect(await page.textContent('#api-rows tr[data-key="shop"] td[data-field="release"]')).toBe(secondRelease);
    expect(await page.textContent('#api-rows tr[data-key="shop"] td[data-field="status"]')).toBe('public');
  });

  it("shows an API's req/s move while a load runs, and sorts by it", async () => {
    const rate = page.locator('#api-rows tr[data-key="busy"] td[data-field="perSecond"]');
    expect(await rate.textContent()).toBe('0');
    const load = backgroundLoad(anvil, '/busy/ping', 4);
    try {
      const first = await figure(rate, (v) => v > 0);
      await figure(rate, (v) => v > 0 && v !== first);
      await page.click('th[data-column="perSecond"]');
      expect(await page.getAttribute('th[data-column="perSecond"]', 'aria-sort')).toBe('descending');
      expect(await page.locator('#api-rows tr').first().getAttribute('data-key')).toBe('busy');
      // The sparkline has drawn a second with requests (its label names the maximum).
      await eventually(async () =>
        /up to [1-9]/.test((await page.getAttribute('#api-rows tr[data-key="busy"] canvas', 'aria-label')) ?? ''),
      );
      await screenshot(page, 'overview');
    } finally {
      await load.stop();
    }
    expect(load.statuses().every((s) => s === 200)).toBe(true);
  });

  it('rolls a release back with the button, after a confirmation, and the old release answers', async () => {
    await page.goto(consoleUrl(anvil, '#/api/shop'));
    await page.locator(`#release-rows tr.current[data-release="${secondRelease}"]`).waitFor();
    await page.click(`#release-rows tr[data-release="${firstRelease}"] button.rollback`);
    await page.locator('#confirm').waitFor({ state: 'visible' });
    expect(await page.textContent('#confirm-title')).toBe('Roll back shop?');
    await page.click('#confirm-ok');
    await eventually(async () => (await anvil.request('/shop/hello')).json().release === 'one');
    await page.locator(`#release-rows tr.current[data-release="${firstRelease}"]`).waitFor();
    const [entry] = (await anvil.admin('/anvil/audit?api=shop&action=rollback')).json().entries;
    expect(entry).toMatchObject({
      action: 'rollback',
      api: 'shop',
      release: firstRelease,
      result: 'ok',
      origin: 'http',
    });
    await page.locator('#api-audit tr[data-action="rollback"]').waitFor();
  });

  it('shows a 5xx in the live log tail, and the routes with their p50/p99', async () => {
    await page.locator('#log-state.live').waitFor();
    expect((await anvil.request('/shop/fail')).status).toBe(503);
    const failed = page.locator('#log-lines li[data-status="503"]');
    await failed.first().waitFor({ timeout: 15_000 });
    expect(await failed.first().textContent()).toContain('GET /fail');
    expect(await failed.first().textContent()).toContain('the warehouse is not answering');

    // A few seconds of traffic, for the chart's line and the routes' percentiles.
    const load = backgroundLoad(anvil, '/shop/hello', 2);
    try {
      await figure(page.locator('#api-figures [data-figure="requests"] .value'), (v) => v >= 50);
      await new Promise((resolve) => setTimeout(resolve, 3_000));
    } finally {
      await load.stop();
    }
    expect(load.statuses().every((s) => s === 200)).toBe(true);
    const p99 = page.locator('#route-rows tr[data-route="get /hello"] td[data-field="p99"]');
    await p99.waitFor();
    expect(await p99.textContent()).toMatch(/\d ms$|\d s$/);
    await page.locator('#latency-chart canvas').waitFor();
    await page.locator('#log-lines li[data-status="200"]').first().waitFor();
    // The endpoint's filter, from the page: the last lines again, 5xx only.
    await page.selectOption('#log-status', '5xx');
    await eventually(async () => (await attributes(page.locator('#log-lines li'), 'data-status')).join() === '503');
    await page.locator('#log-state.live').waitFor();
    await screenshot(page, 'api');
  });

  it('requeues and flushes failed jobs with the buttons', async () => {
    expect((await anvil.request('/worker/fail', { method: 'POST' })).status).toBe(202);
    await page.goto(consoleUrl(anvil, '#/api/worker'));
    const failed = page.locator('#job-counts [data-state="failed"] dd');
    await figure(failed, (v) => v === 1);
    await page.click('#jobs-retry');
    await page.click('#confirm-ok');
    await page.locator('#toast', { hasText: '1 job(s) requeued' }).waitFor();
    // It runs again and fails again (four runs), then the flush removes it.
    await eventually(async () => {
      const { counts } = (await anvil.admin('/anvil/api/worker/jobs')).json();
      return counts.failed === 1 && counts.waiting + counts.delayed + counts.active === 0;
    }, 20_000);
    await page.click('#jobs-flush');
    await page.click('#confirm-ok');
    await page.locator('#toast', { hasText: 'job(s) removed' }).waitFor();
    await figure(failed, (v) => v === 0);
    const actions = (await anvil.admin('/anvil/audit?api=worker'))
      .json()
      .entries.map((e: { action: string }) => e.action);
    expect(actions.slice(0, 2)).toEqual(['jobs-flush', 'jobs-requeue-failed']);
  });

  it('refuses an inline script (Content-Security-Policy)', async () => {
    // Evaluated in the page (as text: the tests are type-checked without the DOM's types).
    const outcome = await page.evaluate(`new Promise((resolve) => {
      document.addEventListener('securitypolicyviolation', (e) => resolve({ ran: 'inlineRan' in window, directive: e.effectiveDirective, blocked: e.blockedURI }), { once: true });
      const script = document.createElement('script');
      script.textContent = 'window.inlineRan = true';
      document.body.append(script);
    })`);
    expect(outcome).toEqual({ ran: false, directive: 'script-src-elem', blocked: 'inline' });
    expect(await page.evaluate("'inlineRan' in window")).toBe(false);
  });

  it('shows the audit log', async () => {
    await page.goto(consoleUrl(anvil, '#/audit'));
    const rollback = page.locator('.audit-rows tr[data-action="rollback"]');
    await rollback.waitFor();
    expect(await rollback.textContent()).toContain(firstRelease);
    expect(await page.locator('.audit-rows tr[data-action="deploy"]').count()).toBeGreaterThan(0);
    await page.selectOption('#audit-action', 'jobs-flush');
    await eventually(async () =>
      (await attributes(page.locator('.audit-rows tr'), 'data-action')).every((a) => a === 'jobs-flush'),
    );
    await page.selectOption('#audit-action', '');
    await rollback.waitFor();
    await screenshot(page, 'audit');
  });

  it('threw no error in the page', () => {
    expect(pageErrors).toEqual([]);
  });
});
