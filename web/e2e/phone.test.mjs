// A phone-sized window: the sidebar hides behind "Show sessions".
import { after, before, test } from 'node:test';
import {
  assert, hasText, idle, lastAnswer, launch, messageBox, open, send, sidebar,
} from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

test('on a 390x844 screen the sidebar is behind "Show sessions" and the composer works', async () => {
  const page = await open(browser, { viewport: { width: 390, height: 844 } });
  assert.ok(!(await sidebar(page).isVisible()), 'the sidebar is hidden');
  const show = page.getByRole('button', { name: 'Show sessions' });
  await show.waitFor();
  // A new chat, from the sidebar.
  await show.click();
  await sidebar(page).waitFor();
  await sidebar(page).getByRole('button', { name: 'New chat', exact: true }).click();
  if (await sidebar(page).isVisible()) await page.keyboard.press('Escape');
  await sidebar(page).waitFor({ state: 'hidden' });
  const box = messageBox(page);
  await box.waitFor();
  const b = await box.boundingBox();
  assert.ok(b && b.x >= 0 && b.x + b.width <= 390 && b.y + b.height <= 844, `the message box is on screen: ${JSON.stringify(b)}`);
  await box.click(); // nothing covers it
  await send(page, 'Explain maps in Go briefly');
  await lastAnswer(page).locator('[data-testid="answer"] .hljs').first().waitFor();
  await idle(page);
  await hasText(lastAnswer(page), 'Reading a missing key');
  await show.click();
  await sidebar(page).waitFor();
  await page.context().close();
});
