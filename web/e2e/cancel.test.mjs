// Stopping a running turn.
import { after, before, test } from 'node:test';
import {
  answerBody, api, hasText, idle, lastAnswer, launch, messageBox, newChat, open, send, sessionId, sessionItem, uid, until,
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

test('A slow title holds nothing up: the next turn runs, and stops, while the model titles the session', async () => {
  const page = await open(browser);
  await newChat(page);
  // The first turn ends; the page then asks the model for a better title
  // in the background (the fake takes 4 s), which holds nothing.
  const u = uid();
  await send(page, `[slowtitle] hello ${u}`);
  await hasText(answerBody(page), 'You said');
  await idle(page);
  const id = await sessionId(page);
  // Titled from the prompt at once.
  const first = (await api('GET', `/v1/sessions/${id}`)).body?.title;
  if (!first?.includes(`hello ${u}`)) throw new Error(`no title from the prompt: ${first}`);
  await send(page, `[slow] count while titled ${uid()}`);
  const answer = lastAnswer(page);
  await hasText(answer.locator('[data-testid="answer"]'), 'Counting slowly: one');
  await page.getByRole('button', { name: 'Stop', exact: true }).click();
  await hasText(answer.locator('[data-testid="turn-note"]'), 'Cancelled');
  await idle(page);
  // The model's title comes, and the sidebar shows it.
  await until(async () => (await api('GET', `/v1/sessions/${id}`)).body?.title === `hello ${u}`, 'the model to title the session');
  await hasText(sessionItem(page, id), `hello ${u}`);
  // The stopped turn does not run on behind the page's back: turns of a
  // session run one at a time, so a next turn that has answered ran after
  // it ended; had it run on, its words would be stored.
  await send(page, `after the stop ${uid()}`);
  await hasText(answerBody(page), 'You said: after the stop');
  await idle(page);
  const { body } = await api('GET', `/v1/sessions/${id}`);
  if (body.running_turn) throw new Error(`a turn still runs: ${body.running_turn}`);
  const said = body.messages.filter((m) => m.role === 'assistant').map((m) => m.content).join(' | ');
  if (said.includes('Counting slowly: one, two')) throw new Error(`the stopped turn ran on: ${said}`);
  await page.context().close();
});
