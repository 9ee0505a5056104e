// Settings: keep thinking open, the theme; and the usage view.
import { after, before, test } from 'node:test';
import {
  assert, hasAttr, hasText, idle, lastAnswer, launch, messageBox, newChat, open, openSettings, send, uid, until,
} from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

/** think runs a turn with reasoning to its end and returns the thinking panel. */
async function think(page, prompt = `[think] Go maps again ${uid()}`) {
  await newChat(page);
  await send(page, prompt);
  const answer = lastAnswer(page);
  await answer.locator('[data-testid="answer"] .hljs').first().waitFor();
  await idle(page);
  return answer.locator('details[data-testid="thinking"]');
}

test('"Keep thinking open" keeps the panel open once the answer starts', async () => {
  const page = await open(browser);
  const dialog = await openSettings(page);
  const keep = dialog.getByRole('checkbox', { name: 'Keep thinking open' });
  await keep.check();
  assert.ok(await keep.isChecked());
  await dialog.getByRole('button', { name: 'Close', exact: true }).click();
  await dialog.waitFor({ state: 'hidden' });
  const thinking = await think(page);
  await hasAttr(thinking, 'open', '');
  await hasText(thinking, 'The user asks about Go maps.');
  await page.context().close();
});

test('the dark theme lands on the document', async () => {
  const page = await open(browser);
  await think(page, 'What are maps in Go?');
  const dialog = await openSettings(page);
  const theme = dialog.locator('select[aria-label="Theme"]');
  const options = await theme.locator('option').evaluateAll((os) => os.map((o) => o.value));
  assert.deepEqual([...options].sort(), ['dark', 'light', 'system']);
  await theme.selectOption('dark');
  await until(() => page.evaluate(() => document.documentElement.dataset.theme === 'dark'), 'data-theme="dark" on <html>');
  await theme.selectOption('light');
  await until(() => page.evaluate(() => document.documentElement.dataset.theme === 'light'), 'data-theme="light" on <html>');
  await theme.selectOption('dark');
  await until(() => page.evaluate(() => document.documentElement.dataset.theme === 'dark'), 'data-theme="dark" on <html> again');
  await dialog.getByRole('button', { name: 'Close', exact: true }).click();
  await dialog.waitFor({ state: 'hidden' });
  // The choice outlives a reload.
  await page.reload();
  await messageBox(page).waitFor();
  await until(() => page.evaluate(() => document.documentElement.dataset.theme === 'dark'), 'the dark theme after a reload');
  await page.context().close();
});

test('the usage view shows the sessions\' tokens, and Close returns to the chat', async () => {
  const page = await open(browser);
  const title = `Go maps again ${uid()}`;
  await think(page, `[think] ${title}`);
  await page.getByRole('button', { name: 'Usage', exact: true }).click();
  const usage = page.locator('[data-testid="usage"]');
  await usage.waitFor();
  await usage.locator('table').first().waitFor();
  await hasText(usage, title); // this test's session, by its title
  let close = usage.getByRole('button', { name: /close|back/i });
  if ((await close.count()) === 0) close = page.getByRole('button', { name: /close|back/i });
  await close.first().click();
  await usage.waitFor({ state: 'hidden' });
  await messageBox(page).waitFor();
  await page.context().close();
});
