// Focus, announcements, and what the page says when a server goes away.
import { after, before, test } from 'node:test';
import {
  assert, hasAttr, hasText, idle, lastAnswer, launch, messageBox, newChat, open, send, sessionId, sessionItem, uid, until,
} from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const focused = (page) => page.evaluate(() => {
  const el = document.activeElement;
  return el ? `${el.tagName.toLowerCase()}[${el.getAttribute('data-testid') ?? el.className}]` : '';
});
const announced = (page) => page.locator('[aria-live="polite"][role="status"]').textContent();

test('after Allow the focus stays on the card, and the live region announces the approval, then the answer', async () => {
  const page = await open(browser);
  await newChat(page);
  await send(page, `[tool] a note ${uid()}`);
  const card = lastAnswer(page).locator('[data-testid="tool-card"]');
  await hasAttr(card, 'data-state', 'approval');
  await until(async () => (await announced(page)).includes('write_file is waiting for your approval'), 'the approval is announced');
  await card.getByRole('button', { name: 'Allow', exact: true }).focus();
  await page.keyboard.press('Enter');
  await hasAttr(card, 'data-state', 'done');
  assert.equal(await focused(page), 'section[tool-card]', 'the focus is on the card, not lost to <body>');
  await idle(page);
  await until(async () => (await announced(page)) === 'The answer is ready.', 'the answer is announced');
  await page.context().close();
});

test('after a rename the focus is back on the session', async () => {
  const page = await open(browser);
  await newChat(page);
  await send(page, `to rename ${uid()}`);
  await idle(page);
  const id = await sessionId(page);
  const item = sessionItem(page, id);
  await item.getByRole('button', { name: 'Rename session' }).click();
  const input = item.getByLabel('Session title');
  await input.fill(`renamed ${uid()}`);
  await input.press('Enter');
  await until(async () => (await focused(page)) === 'button[session-open]', async () => `the focus is on the session's button; it is on ${await focused(page)}`);
  await page.context().close();
});

test('when hearth serve stops answering, a banner says so', async () => {
  const page = await open(browser);
  await hasAttr(page.locator('[data-testid="provider-status"]'), 'data-reachable', 'true');
  await page.route('**/v1/health', (route) => route.abort('connectionrefused'));
  // Health is checked every 30 s, and at once when the window comes back
  // online or into focus.
  await page.evaluate(() => window.dispatchEvent(new Event('online')));
  await until(async () => (await page.getByRole('alert').filter({ hasText: 'Hearth does not answer' }).count()) === 1,
    'the "Hearth does not answer" banner');
  await page.unroute('**/v1/health');
  await page.evaluate(() => window.dispatchEvent(new Event('focus')));
  await until(async () => (await page.getByRole('alert').filter({ hasText: 'Hearth does not answer' }).count()) === 0,
    'the banner goes once Hearth answers again');
  await page.context().close();
});

test('the model list comes back with the model server', async () => {
  const down = { status: 'degraded', provider: { kind: 'ollama', reachable: false, latency_ms: 0, error: { code: 'provider_unreachable', message: 'cannot reach the model server', hint: 'start it with `ollama serve`' } }, tools: [], approval_mode: 'default' };
  const page = await open(browser, { ready: false, route: async (ctx) => {
    await ctx.route('**/v1/models', (r) => r.fulfill({ status: 502, contentType: 'application/json', body: '{"error":{"code":"provider_unreachable","message":"down"}}' }));
    await ctx.route('**/v1/health', (r) => r.fulfill({ status: 200, contentType: 'application/json', body: JSON.stringify(down) }));
  } });
  await messageBox(page).waitFor();
  const banner = page.locator('[data-testid="provider-problem"]');
  await hasText(banner, 'ollama serve');
  const picker = page.locator('select[aria-label="Model"]');
  assert.ok((await picker.locator('option').count()) <= 1, 'no list while the server is down');
  await page.context().unrouteAll();
  await banner.getByRole('button', { name: 'Check again' }).click();
  await until(async () => (await picker.locator('option').allTextContents()).includes('m2'), 'the models are listed again');
  await banner.waitFor({ state: 'detached' });
  await page.context().close();
});
