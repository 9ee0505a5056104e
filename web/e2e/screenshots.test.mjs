// The docs' screenshots (docs/web.md): run only when HEARTH_SCREENSHOTS names
// a directory, against a server of their own so that the sidebar holds only
// their sessions:
//
//   HEARTH_SCREENSHOTS=$PWD/docs/screenshots go test -run TestWebUI ./cmd/hearth/
import { after, before, test } from 'node:test';
import {
  answerBody, hasAttr, hasText, idle, lastAnswer, launch, newChat, open, openSettings, send, shot, until,
} from './helpers.mjs';

const enabled = !!process.env.HEARTH_SCREENSHOTS;
let browser;
before(async () => { if (enabled) browser = await launch(); });
after(async () => { await browser?.close(); });

test('screenshots of the main screens', { skip: !enabled && 'HEARTH_SCREENSHOTS is not set' }, async () => {
  const page = await open(browser);
  // Earlier sessions, for a sidebar that looks used.
  await send(page, 'Say hello');
  await idle(page);
  await newChat(page);
  await send(page, 'What are maps in Go?');
  // The reasoning, live.
  await hasText(lastAnswer(page).locator('details[data-testid="thinking"][open]'), 'I should show');
  await shot(page, 'web-thinking.png');
  await lastAnswer(page).locator('[data-testid="answer"] .hljs').first().waitFor();
  await idle(page);
  await until(async () => (await page.locator('[data-testid="session-item"]').allTextContents()).some((t) => t.includes('What are maps')),
    'the session is titled');
  await shot(page, 'web-chat-light.png');

  // A second turn that needs an approval.
  await send(page, 'Save a note about the release plan');
  const card = lastAnswer(page).locator('[data-testid="tool-card"]');
  await hasAttr(card, 'data-state', 'approval');
  await shot(page, 'web-approval.png');
  await card.getByRole('button', { name: 'Allow', exact: true }).click();
  await hasText(answerBody(page), 'I wrote');
  await idle(page);

  const dialog = await openSettings(page);
  await dialog.locator('select[aria-label="Theme"]').selectOption('dark');
  await dialog.getByRole('button', { name: 'Close', exact: true }).click();
  await dialog.waitFor({ state: 'hidden' });
  await page.locator('.conversation').evaluate((el) => { el.scrollTop = 0; });
  await shot(page, 'web-chat-dark.png');

  await page.getByRole('button', { name: 'Usage', exact: true }).click();
  await page.locator('[data-testid="usage"] table').waitFor();
  const settings2 = await openSettings(page);
  await settings2.locator('select[aria-label="Theme"]').selectOption('light');
  await settings2.getByRole('button', { name: 'Close', exact: true }).click();
  await shot(page, 'web-usage.png');
  const url = page.url();
  await page.context().close();

  const phone = await open(browser, { viewport: { width: 390, height: 844 }, path: new URL(url).pathname });
  await phone.locator('[data-testid="message"]').first().waitFor();
  await shot(phone, 'web-phone.png');
  await phone.context().close();

  // A task with a plan: the checklist above the conversation, mid-way.
  const planned = await open(browser);
  await newChat(planned);
  await send(planned, 'Summarise the notes of the meeting');
  await hasAttr(planned.locator('[data-testid="plan-step"]').nth(1), 'data-status', 'in_progress');
  await shot(planned, 'web-plan.png');
  await hasText(answerBody(planned), 'All three steps are done.');
  await idle(planned);
  await planned.context().close();
});
