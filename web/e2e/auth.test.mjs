// Opening the UI with the token of the printed address, and with a wrong one.
import { after, before, test } from 'node:test';
import { assert, BASE_URL, hasText, launch, open, until } from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

test('the token leaves the address bar once read', async () => {
  const page = await open(browser);
  await until(() => !page.url().includes('token'), () => `the token is removed from the address; it is ${page.url()}`);
  assert.ok(page.url().startsWith(BASE_URL), page.url());
  // It is kept for the tab: a reload still works.
  await page.reload();
  await page.locator('textarea[aria-label="Message"]').waitFor();
  assert.equal(await page.getByRole('alert').count(), 0, 'no error after a reload');
  await page.context().close();
});

test('a wrong token asks for the address hearth serve printed', async () => {
  const page = await open(browser, { token: 'not-the-token-0123456789abcdef', ready: false });
  const alert = page.getByRole('alert').filter({ hasText: 'hearth serve' });
  await alert.first().waitFor();
  await hasText(alert.first(), 'hearth serve');
  await page.context().close();
});
