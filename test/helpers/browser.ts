import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';
import { TEST_KEY, type TestInstance } from './instance.js';

/** The system's Chromium (Debian's package `chromium`); CHROMIUM_PATH overrides. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Where the browser tests leave the console's screenshots: a temp folder, since tests never write
 * tracked files. The ones checked in and shown in the README (docs/console/) are refreshed by hand:
 * `ANVIL_SCREENSHOTS_DIR=docs/console npx vitest run test/console`.
 */
export const SCREENSHOTS_DIR = process.env.ANVIL_SCREENSHOTS_DIR ?? join(tmpdir(), 'anvil-console-screenshots');

/**
 * Launches the system's Chromium, headless, through playwright-core. A missing Chromium fails the
 * test with what to do, never skips it: the console's tests are part of `npm test`.
 */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH)) {
    throw new Error(
      `Chromium is not installed at ${CHROMIUM_PATH}: the console's browser tests drive the system's Chromium. ` +
        'Install it (Debian/Ubuntu: apt-get install -y chromium; .ci/run does it when missing) or set CHROMIUM_PATH to another Chromium.',
    );
  }
  // CI runs as root, where Chromium's sandbox cannot start; *.localhost names go to loopback.
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-dev-shm-usage',
      '--disable-gpu',
      '--host-resolver-rules=MAP *.localhost 127.0.0.1',
    ],
  });
}

/** The console's address on the instance's admin host. */
export function consoleUrl(anvil: TestInstance, hash = ''): string {
  return `http://admin.localhost:${anvil.port}/anvil/console/${hash}`;
}

/** Logs in through the form (public host `localhost`, the test key unless another is given). */
export async function logIn(page: Page, anvil: TestInstance, key = TEST_KEY): Promise<void> {
  await page.goto(consoleUrl(anvil));
  await page.fill('#login-host', 'localhost');
  await page.fill('#login-key', key);
  await page.click('#login-submit');
}

export async function screenshot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS_DIR, `${name}.png`), fullPage: true });
}
