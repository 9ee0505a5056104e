// A model server that does not answer: the page says so, and how to fix it.
import { after, before, test } from 'node:test';
import {
  assert, hasAttr, hasText, idle, lastAnswer, launch, messages, send, sessionId, text, uid, WAIT,
} from './helpers.mjs';

// A second hearth serve whose model server is gone (TestWebUI starts it).
const DEAD = process.env.HEARTH_E2E_DEAD_URL;
let browser;
before(async () => { if (DEAD) browser = await launch(); });
after(async () => { await browser?.close(); });

test('an unreachable model server shows red, with the fix', { skip: !DEAD && 'HEARTH_E2E_DEAD_URL is not set' }, async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(WAIT);
  const page = await context.newPage();
  await page.goto(DEAD);
  await hasAttr(page.locator('[data-testid="provider-status"]'), 'data-reachable', 'false');
  const banner = page.locator('[data-testid="provider-problem"]');
  await hasText(banner, 'ollama serve'); // the hint: how to start it
  await hasText(banner, 'cannot reach');
  // The configured model is still the one shown, though the list is empty.
  assert.equal(await page.locator('select[aria-label="Model"]').inputValue(), 'm');
  await banner.getByRole('button', { name: 'Check again' }).click();
  await hasAttr(page.locator('[data-testid="provider-status"]'), 'data-reachable', 'false');
  await context.close();
});

test('a turn that could not reach the model server shows as failed, and still does once reloaded', { skip: !DEAD && 'HEARTH_E2E_DEAD_URL is not set' }, async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  context.setDefaultTimeout(WAIT);
  const page = await context.newPage();
  await page.goto(DEAD);
  const prompt = `are you there ${uid()}`;
  await send(page, prompt);
  const alert = lastAnswer(page).getByRole('alert');
  await hasText(alert, 'The model server failed.');
  await idle(page);
  const live = await text(alert);
  const id = await sessionId(page);
  // Reloaded, the turn is rebuilt from the session, whose record of the
  // failure ("Provider request failed: …") is shown as the error it was,
  // not as the model's answer.
  await page.reload();
  await hasText(messages(page, 'user').last(), prompt);
  const stored = lastAnswer(page).getByRole('alert');
  await hasText(stored, 'cannot reach');
  assert.ok(page.url().includes(id), `the reload left the session: ${page.url()}`);
  assert.equal(await text(stored), live);
  assert.equal(await stored.getAttribute('class'), 'turn-error');
  assert.equal(await lastAnswer(page).locator('[data-testid="answer"]').count(), 0, 'the failure is shown as an answer');
  assert.equal(await messages(page, 'assistant').count(), 1);
  await context.close();
});
