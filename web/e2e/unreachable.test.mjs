// A model server that does not answer: the page says so, and how to fix it.
import { after, before, test } from 'node:test';
import { assert, hasAttr, hasText, launch, WAIT } from './helpers.mjs';

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
