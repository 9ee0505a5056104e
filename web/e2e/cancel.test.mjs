// Stopping a running turn.
import { after, before, test } from 'node:test';
import {
  answerBody, hasText, idle, lastAnswer, launch, messageBox, newChat, open, send, sessionId, uid,
} from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

test('Stop cancels the turn: it is marked cancelled and the partial answer is kept', async () => {
  const page = await open(browser);
  await newChat(page);
  await send(page, `[slow] count to ten ${uid()}`);
  const answer = lastAnswer(page);
  await hasText(answer.locator('[data-testid="answer"]'), 'Counting slowly: one');
  const id = await sessionId(page);
  await page.getByRole('button', { name: 'Stop', exact: true }).click();
  await hasText(answer.locator('[data-testid="turn-note"]'), 'Cancelled');
  await idle(page);
  const partial = await answer.locator('[data-testid="answer"]').textContent();
  if (partial.includes('ten')) throw new Error(`the answer went on to the end: ${partial}`);
  // The message box works again.
  await messageBox(page).fill('next');
  // Reloaded, the session keeps what was said.
  await page.reload();
  await hasText(answerBody(page), 'Counting slowly: one');
  if (!page.url().includes(id)) throw new Error(`the reload left the session: ${page.url()}`);
  await page.context().close();
});
