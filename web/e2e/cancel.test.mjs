// Stopping a running turn.
import { after, before, test } from 'node:test';
import {
  answerBody, api, hasText, idle, lastAnswer, launch, messageBox, newChat, open, send, sessionId, uid, until,
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

test('Stop works while the next turn waits for the last one to be saved (a slow title)', async () => {
  const page = await open(browser);
  await newChat(page);
  // A new session's first turn ends, then the server asks the model for a
  // title (4 s here) and keeps the session until it has one.
  await send(page, `[slowtitle] hello ${uid()}`);
  await hasText(answerBody(page), 'You said');
  await idle(page);
  await send(page, `[slow] count while titled ${uid()}`);
  await page.getByRole('button', { name: 'Stop', exact: true }).click();
  const answer = lastAnswer(page);
  await hasText(answer.locator('[data-testid="turn-note"]'), 'Cancelled');
  await idle(page);
  // The stopped turn must not run on behind the page's back once the
  // title has let the session go. Turns of a session run one at a time, so
  // a next turn that has answered ran after the title; had the stopped turn
  // run on, it would have begun before that answer (its first words stored)
  // or be running still (it takes 18 s).
  const id = await sessionId(page);
  await until(async () => (await api('GET', `/v1/sessions/${id}`)).body?.title, 'the session to be titled');
  await send(page, `after the stop ${uid()}`);
  await hasText(answerBody(page), 'You said: after the stop');
  await idle(page);
  const { body } = await api('GET', `/v1/sessions/${id}`);
  if (body.running_turn) throw new Error(`a turn still runs: ${body.running_turn}`);
  const said = body.messages.filter((m) => m.role === 'assistant').map((m) => m.content).join(' | ');
  if (said.includes('Counting slowly: one, two')) throw new Error(`the stopped turn ran on: ${said}`);
  await page.context().close();
});
