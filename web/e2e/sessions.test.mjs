// The sessions sidebar: a session survives a reload; rename, delete, search.
import { after, before, test } from 'node:test';
import {
  answerBody, api, assert, chat, hasAttr, hasText, launch, messages, newChat, open, sessionId, sessionItem, sidebar,
  uid, until,
} from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

/** started opens a new chat, runs one echo turn, and returns the session's id. */
async function started(page, prompt) {
  await newChat(page);
  await chat(page, prompt, 'You said:');
  return sessionId(page);
}

test('a reload reopens the session: in the sidebar, active, with its messages', async () => {
  const page = await open(browser);
  const prompt = `remember this ${uid()}`;
  const id = await started(page, prompt);
  await page.reload();
  const item = sessionItem(page, id);
  await item.waitFor();
  await hasText(item, prompt); // the fake titles a session with its prompt
  await hasAttr(item.getByRole('button', { name: prompt }), 'aria-current', 'page');
  await hasText(messages(page, 'user').first(), prompt);
  await hasText(answerBody(page), `You said: ${prompt}`);
  await page.context().close();
});

test('rename a session from the sidebar: Escape cancels, Enter saves', async () => {
  const page = await open(browser);
  const word = uid();
  const id = await started(page, `rename me ${word}`);
  const item = sessionItem(page, id);
  await hasText(item, `rename me ${word}`);

  await item.hover();
  await item.getByRole('button', { name: 'Rename session' }).click();
  const input = page.getByRole('textbox', { name: 'Session title' });
  await input.fill('not this');
  await input.press('Escape');
  await input.waitFor({ state: 'hidden' });
  await hasText(item, `rename me ${word}`);

  await item.hover();
  await item.getByRole('button', { name: 'Rename session' }).click();
  await input.fill(`renamed ${word}`);
  await input.press('Enter');
  await input.waitFor({ state: 'hidden' });
  await hasText(item, `renamed ${word}`);
  await until(async () => (await api('GET', `/v1/sessions/${id}`)).body?.title === `renamed ${word}`, 'the new title is saved');
  await page.context().close();
});

test('delete a session from the sidebar: Cancel keeps it, Delete removes it', async () => {
  const page = await open(browser);
  const id = await started(page, `delete me ${uid()}`);
  const item = sessionItem(page, id);

  await item.hover();
  await item.getByRole('button', { name: 'Delete session' }).click();
  let dialog = page.getByRole('dialog');
  await dialog.getByRole('button', { name: 'Cancel', exact: true }).click();
  await dialog.waitFor({ state: 'hidden' });
  assert.equal((await api('GET', `/v1/sessions/${id}`)).status, 200, 'Cancel keeps the session');

  await item.hover();
  await item.getByRole('button', { name: 'Delete session' }).click();
  dialog = page.getByRole('dialog');
  await dialog.getByRole('button', { name: 'Delete', exact: true }).click();
  await item.waitFor({ state: 'detached' });
  await until(async () => (await api('GET', `/v1/sessions/${id}`)).status === 404, 'the session is deleted on the server');
  await page.context().close();
});

test('search filters the sidebar', async () => {
  const page = await open(browser);
  const word = `zebra${uid()}`;
  const a = await started(page, `${word} crossing`);
  const b = await started(page, `yak${uid()} shaving`);
  const search = sidebar(page).locator('input[aria-label="Search sessions"]');
  await search.fill(word);
  await sessionItem(page, b).waitFor({ state: 'hidden' });
  await sessionItem(page, a).waitFor();
  assert.equal(await sidebar(page).locator('[data-testid="session-item"]').count(), 1, `only the session with ${word} is listed`);
  await search.fill('');
  await sessionItem(page, b).waitFor();
  await sessionItem(page, a).waitFor();
  await page.context().close();
});
