// Shared helpers of the web UI's end-to-end tests. They run in a real
// Chromium (playwright-core) against a real `hearth serve` whose model is a
// scripted fake; cmd/hearth/web_e2e_test.go (TestWebUI) starts both and runs
// these files with `node --test --test-concurrency=1 e2e/`, passing:
//
//   HEARTH_E2E_URL        the server's base URL (http://127.0.0.1:PORT)
//   HEARTH_E2E_TOKEN      its API token
//   HEARTH_E2E_WORKSPACE  the agent's workspace directory
//   HEARTH_E2E_NEW_WORKSPACE  a folder for workspaces.test.mjs to add
//   HEARTH_E2E_FRESH_URL, HEARTH_E2E_FRESH_TOKEN  a server of its own for
//                         workspaces-switch.test.mjs, whose workspace was
//                         never seen (the others' trust is chosen before
//                         the tests, so that the page asks nothing)
//   HEARTH_E2E_SWITCH_WORKSPACE  a folder for it to add and switch to
//   HEARTH_CHROMIUM       the Chromium binary (default /usr/bin/chromium)
//   HEARTH_SCREENSHOTS    when set, a directory for the docs' screenshots
//
// The fake model answers by markers in the prompt: "[think]" (or "maps in
// Go") reasons, then answers in Markdown with a Go code block; "[tool]" (or
// a prompt starting "Save a note") calls write_file on note-WORD.txt (WORD:
// the prompt's last word), which needs approval; "[slow]" answers
// "Counting slowly: one, two, …" over some 20 s; "[plan]" plans three steps
// and does them one reply at a time, "[planskip]" is sent back by
// strict_plan with a step open (see plan.test.mjs); anything else is echoed as
// "You said: PROMPT". A session's title is the prompt's first six words
// without the marker. The screenshots' prompts are plain words.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { chromium } from 'playwright-core';

export const BASE_URL = need('HEARTH_E2E_URL');
export const TOKEN = need('HEARTH_E2E_TOKEN');
export const WORKSPACE = need('HEARTH_E2E_WORKSPACE');
const SCREENSHOTS = process.env.HEARTH_SCREENSHOTS || '';

/**
 * How long one wait may take, in ms. Only a hang detector: what a test
 * checks is that the page gets there, not how soon; CI runs this beside the
 * race-enabled Go tests on 2 cores, where a step can take many seconds.
 */
export const WAIT = 60000;

function need(name) {
  const v = process.env[name];
  if (!v) {
    throw new Error(`${name} is not set: run these tests with go test -run TestWebUI ./cmd/hearth`);
  }
  return v;
}

/** launch starts Chromium; close it in after(). */
export function launch() {
  return chromium.launch({
    executablePath: process.env.HEARTH_CHROMIUM || '/usr/bin/chromium',
    // Without the background-networking flags Chromium's own connections
    // are refused on a closed network, and slow its start.
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
}

/** A short unique word, to tell this test's sessions from the others'. */
export function uid() {
  return 'u' + randomBytes(4).toString('hex');
}

/**
 * open opens the web UI in a fresh browser context (its own storage), as the
 * address `hearth serve` prints: /?token=…. It waits for the message box.
 */
export async function open(browser, { viewport = { width: 1280, height: 800 }, base = BASE_URL, token = TOKEN, path = '/', ready = true, route } = {}) {
  const context = await browser.newContext({ viewport, colorScheme: 'light', reducedMotion: 'reduce' });
  context.setDefaultTimeout(WAIT);
  if (route) await route(context); // requests to answer or refuse before the page loads
  const page = await context.newPage();
  page.on('pageerror', (err) => console.error(`[page error] ${err.message}`));
  page.on('console', (msg) => {
    if (msg.type() === 'error') console.error(`[console] ${msg.text()}`);
  });
  await page.goto(`${base}${path}?token=${encodeURIComponent(token)}`);
  if (ready) await messageBox(page).waitFor();
  return page;
}

/** The composer's text area. */
export function messageBox(page) {
  return page.locator('textarea[aria-label="Message"]');
}

/** The sessions sidebar. */
export function sidebar(page) {
  return page.locator('nav[aria-label="Sessions"]');
}

/** The sidebar item of a session. */
export function sessionItem(page, id) {
  return page.locator(`[data-testid="session-item"][data-session-id="${id}"]`);
}

/** Every message, or those of one role. */
export function messages(page, role) {
  return page.locator(role ? `[data-testid="message"][data-role="${role}"]` : '[data-testid="message"]');
}

/** The last assistant message. */
export function lastAnswer(page) {
  return messages(page, 'assistant').last();
}

/**
 * The rendered Markdown of the last assistant message: its last answer
 * block (a turn that calls tools has one for each of the model's replies).
 */
export function answerBody(page) {
  return lastAnswer(page).locator('[data-testid="answer"]').last();
}

/**
 * newChat starts a new chat with the sidebar's "New chat" (opening the
 * sidebar first on a phone).
 */
export async function newChat(page) {
  const button = page.getByRole('button', { name: 'New chat', exact: true });
  if (!(await button.isVisible())) {
    await page.getByRole('button', { name: 'Show sessions' }).click();
  }
  await button.click();
  await messageBox(page).waitFor();
  await until(async () => (await messages(page).count()) === 0, 'a new chat shows no messages');
}

/** send types a prompt in the message box and sends it with Enter. */
export async function send(page, text) {
  const box = messageBox(page);
  await box.fill(text);
  await box.press('Enter');
  await until(async () => (await box.inputValue()) === '', 'the message box is emptied once the prompt is sent');
  await until(async () => (await messages(page, 'user').last().textContent({ timeout: 200 }).catch(() => ''))?.includes(text),
    `the prompt ${JSON.stringify(text)} is shown as a user message`);
}

/** idle waits for the running turn to end: Stop is gone, Send is back. */
export async function idle(page, timeout = WAIT) {
  await page.getByRole('button', { name: 'Stop', exact: true }).waitFor({ state: 'hidden', timeout });
  await page.getByRole('button', { name: 'Send', exact: true }).waitFor({ timeout });
}

/** The session id in the page's address (/s/{id}), waited for. */
export async function sessionId(page) {
  let id = '';
  await until(() => {
    id = new URL(page.url()).pathname.match(/^\/s\/([^/]+)$/)?.[1] ?? '';
    return id !== '';
  }, () => `the address names the session (/s/{id}); it is ${page.url()}`);
  return decodeURIComponent(id);
}

/** chat sends a prompt and waits for its answer to hold want, and for the turn to end. */
export async function chat(page, prompt, want) {
  await send(page, prompt);
  await hasText(answerBody(page), want);
  await idle(page);
}

/**
 * until polls cond (which may be async) until it returns a truthy value, or
 * fails after timeout with what (a string, or a function making one).
 */
export async function until(cond, what, timeout = WAIT) {
  const end = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      const v = await cond();
      if (v) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > end) {
      const msg = typeof what === 'function' ? await what() : what;
      throw new Error(`waited ${timeout} ms for: ${msg}${last ? ` (last error: ${last.message})` : ''}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** hasText waits until the locator's text includes want (a string or RegExp). */
export async function hasText(locator, want, timeout = WAIT) {
  let text = '';
  await until(async () => {
    text = (await locator.textContent({ timeout: 250 })) ?? '';
    return typeof want === 'string' ? text.includes(want) : want.test(text);
  }, () => `${locator} to contain ${want}; its text is ${JSON.stringify(text.slice(0, 300))}`, timeout);
  return text;
}

/** hasAttr waits until the locator's attribute equals want (null: absent). */
export async function hasAttr(locator, name, want, timeout = WAIT) {
  let got;
  await until(async () => {
    got = await locator.getAttribute(name, { timeout: 250 });
    return got === want;
  }, () => `${locator} to have ${name}=${JSON.stringify(want)}; it has ${JSON.stringify(got)}`, timeout);
}

/** api calls the server's API with the token (another server's, with base and token). */
export async function api(method, path, body, { base = BASE_URL, token = TOKEN } = {}) {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body ? { 'Content-Type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

/** shot writes a screenshot for the docs when HEARTH_SCREENSHOTS is set. */
export async function shot(page, name) {
  if (!SCREENSHOTS) return;
  await page.evaluate(() => document.fonts?.ready);
  await page.screenshot({ path: join(SCREENSHOTS, name), animations: 'disabled', caret: 'hide' });
}

/** openSettings opens the settings dialog and returns it. */
export async function openSettings(page) {
  await page.getByRole('button', { name: 'Settings', exact: true }).click();
  const dialog = page.getByRole('dialog');
  await dialog.waitFor();
  return dialog;
}

/** The element's text, whitespace collapsed. */
export async function text(locator) {
  return ((await locator.textContent()) ?? '').replace(/\s+/g, ' ').trim();
}

export { assert };
