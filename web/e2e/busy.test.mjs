// A session another client is running a turn in.
import { after, before, test } from 'node:test';
import {
  api, BASE_URL, hasAttr, hasText, lastAnswer, launch, messageBox, newChat, open, send, sessionId, TOKEN, uid, until,
} from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

test('sending in a session busy elsewhere gives the message back and shows the running turn', async () => {
  const page = await open(browser);
  await newChat(page);
  await send(page, `first ${uid()}`);
  await hasText(lastAnswer(page).locator('[data-testid="answer"]'), 'You said');
  await page.getByRole('button', { name: 'Send', exact: true }).waitFor();
  const id = await sessionId(page);
  await until(async () => !(await api('GET', `/v1/sessions/${id}`)).body.running_turn, 'the first turn is saved', 10000);

  // Another client (hearth run, another tab) starts a long turn.
  const other = new AbortController();
  const res = await fetch(`${BASE_URL}/v1/sessions/${id}/turns`, {
    method: 'POST',
    headers: { Authorization: `Bearer ${TOKEN}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ message: `[slow] from elsewhere ${uid()}` }),
    signal: other.signal,
  });
  if (res.status !== 200) throw new Error(`the other turn did not start: ${res.status}`);
  try {
    const mine = `mine ${uid()}`;
    await messageBox(page).fill(mine);
    await messageBox(page).press('Enter');
    // The message is not lost: it is back in the box, and the page says why.
    await until(async () => (await messageBox(page).inputValue()) === mine, 'the message is given back to the box');
    await hasText(page.getByRole('alert').filter({ hasText: 'busy' }), 'busy');
    // The turn that holds the session is shown, and can be stopped.
    await hasText(lastAnswer(page).locator('[data-testid="answer"]'), 'Counting slowly');
    await page.getByRole('button', { name: 'Stop', exact: true }).click();
    await hasText(lastAnswer(page).locator('[data-testid="turn-note"]'), 'Cancelled');
    await hasAttr(page.getByRole('button', { name: 'Send', exact: true }), 'type', 'submit');
  } finally {
    other.abort();
    await page.context().close();
  }
});

test('a message the server refuses (too large) is given back, with the reason', async () => {
  const page = await open(browser);
  await newChat(page);
  const huge = `too long ${uid()} ` + 'x'.repeat(1_100_000); // over hearth serve's 1 MiB body limit
  await messageBox(page).fill(huge);
  await messageBox(page).press('Enter');
  await hasText(page.getByRole('alert').filter({ hasText: 'Not sent' }), 'over the limit');
  await until(async () => (await messageBox(page).inputValue()) === huge, 'the message is back in the box, whole');
  await page.getByRole('button', { name: 'Send', exact: true }).waitFor();
  await page.context().close();
});
