// Taking back what the agent did: undo, redo and rewind from the page, each
// with a preview first, the files on disk following; fork and archive.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import {
  answerBody, api, assert, chat, hasAttr, hasText, idle, lastAnswer, launch, messageBox, messages, newChat, open, send,
  sessionId, sessionItem, sidebar, uid, until, WORKSPACE,
} from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

const note = (word) => join(WORKSPACE, `note-${word}.txt`);
const written = 'a note from the web UI test\n';

/**
 * write runs a turn whose model writes note-WORD.txt, allowed from its
 * card; it returns the card.
 */
async function write(page, word) {
  await send(page, `[tool] write a note ${word}`);
  const card = lastAnswer(page).locator('[data-testid="tool-card"][data-tool="write_file"]');
  await hasAttr(card, 'data-state', 'approval');
  await card.getByRole('button', { name: 'Allow', exact: true }).click();
  await hasText(answerBody(page), `I wrote note-${word}.txt.`);
  await idle(page);
  assert.equal(readFileSync(note(word), 'utf8'), written, `note-${word}.txt is written`);
  return card;
}

/** The open dialog, once its preview lists path with action (and conflict, when given). */
async function previewed(page, path, action, conflict = false) {
  const dialog = page.getByRole('dialog');
  const row = dialog.locator(`[data-testid="restore-file"][data-path="${path}"]`);
  await row.waitFor();
  await hasAttr(row, 'data-action', action);
  await hasAttr(row, 'data-conflict', conflict ? 'true' : null);
  return dialog;
}

async function confirm(dialog, name) {
  await dialog.getByRole('button', { name, exact: true }).click();
  await dialog.waitFor({ state: 'hidden' });
}

test('undo, redo and rewind: each previewed, then made; the files on disk follow, and a conflict is asked about', async () => {
  const page = await open(browser);
  await newChat(page);
  const one = uid();
  const two = uid();
  const card = await write(page, one);
  // The call's checkpoint, shown on its card.
  await hasText(card.locator('[data-testid="tool-checkpoint"]'), /checkpoint #\d+/);
  await write(page, two);
  const id = await sessionId(page);
  const tools = page.getByRole('group', { name: 'This session' });

  // Undo: the preview says the second note goes, and nothing goes yet.
  await tools.getByRole('button', { name: 'Undo last turn' }).click();
  let dialog = await previewed(page, `note-${two}.txt`, 'delete');
  await hasText(dialog.locator('[data-testid="restore-conversation"]'), 'The conversation stays as it is');
  assert.ok(existsSync(note(two)), 'the preview changed nothing');
  await confirm(dialog, 'Undo');
  await until(() => !existsSync(note(two)), `note-${two}.txt is gone after the undo`);
  assert.equal(readFileSync(note(one), 'utf8'), written, 'the first turn\'s note stays');
  const undone = page.locator('[data-testid="restore"][data-op="undo"]');
  await hasText(undone, `note-${two}.txt`);
  await hasText(undone, `write a note ${two}`);

  // Redo brings it back.
  await tools.getByRole('button', { name: 'Redo' }).click();
  dialog = await previewed(page, `note-${two}.txt`, 'create');
  await confirm(dialog, 'Redo');
  await until(() => existsSync(note(two)), `note-${two}.txt is back after the redo`);
  await page.locator('[data-testid="restore"][data-op="redo"]').waitFor();
  assert.equal(await messages(page, 'user').count(), 2);

  // The user changes the first note by hand; then rewinds to before the
  // second prompt: the first note is a conflict, and is kept.
  writeFileSync(note(one), 'changed by hand\n');
  const second = messages(page, 'user').nth(1);
  await second.hover();
  await second.getByRole('button', { name: 'Rewind to before this' }).click();
  dialog = await previewed(page, `note-${one}.txt`, 'modify', true);
  await previewed(page, `note-${two}.txt`, 'delete');
  await hasText(dialog.locator('[data-testid="restore-conflicts"]'), 'changed after the agent changed it');
  await hasText(dialog.locator('[data-testid="restore-conversation"]'), 'loses the 4 messages');
  assert.equal(await dialog.getByRole('button', { name: 'Rewind', exact: true }).count(), 0, 'a conflict asks: keep or overwrite');
  await confirm(dialog, 'Keep my changes');
  await until(() => !existsSync(note(two)), `note-${two}.txt is gone after the rewind`);
  assert.equal(readFileSync(note(one), 'utf8'), 'changed by hand\n', 'the file changed by hand is kept');
  // The conversation ends with the first turn, on screen and on the server;
  // the prompt taken back is in the message box.
  await until(async () => (await messages(page, 'user').count()) === 1, 'one user message is left on screen');
  await hasText(messages(page, 'user').first(), `write a note ${one}`);
  await hasText(answerBody(page), `I wrote note-${one}.txt.`);
  assert.equal(await messageBox(page).inputValue(), `[tool] write a note ${two}`);
  const rewound = page.locator('[data-testid="restore"][data-op="rewind"]');
  await hasText(rewound, '4 messages were taken out');
  const { body } = await api('GET', `/v1/sessions/${id}`);
  assert.equal(body.messages.length, 4, 'the server keeps the first turn only');
  await page.context().close();
});

test('fork from an answer opens a new session holding the conversation up to there; its first prompt rewinds to the start', async () => {
  const page = await open(browser);
  await newChat(page);
  const word = uid();
  await chat(page, `fork me ${word}`, 'You said:');
  const id = await sessionId(page);
  await chat(page, `and more ${word}`, `You said: and more ${word}`);
  const first = messages(page, 'assistant').first();
  await first.hover();
  await first.getByRole('button', { name: 'Fork from here' }).click();
  const dialog = page.getByRole('dialog');
  await dialog.getByLabel('Title of the new session').fill(`forked ${word}`);
  await confirm(dialog, 'Fork');
  await until(async () => (await sessionId(page)) !== id, 'the fork is opened');
  const fork = await sessionId(page);
  await hasText(sessionItem(page, fork), `forked ${word}`);
  await until(async () => (await messages(page, 'user').count()) === 1, 'the fork holds the first turn only');
  await hasText(messages(page, 'user').first(), `fork me ${word}`);
  const { body } = await api('GET', `/v1/sessions/${fork}`);
  assert.equal(body.fork_of, id);
  assert.equal(body.messages.length, 2);

  // Before its first prompt: the fork starts again, the prompt in the box.
  const prompt = messages(page, 'user').first();
  await prompt.hover();
  await prompt.getByRole('button', { name: 'Rewind to before this' }).click();
  const rewind = page.getByRole('dialog');
  await hasText(rewind.locator('[data-testid="restore-conversation"]'), 'loses the 2 messages');
  await confirm(rewind, 'Rewind');
  await until(async () => (await messages(page).count()) === 0, 'no message is left');
  assert.equal(await messageBox(page).inputValue(), `fork me ${word}`);
  assert.equal((await api('GET', `/v1/sessions/${fork}`)).body.messages.length, 0);
  await page.context().close();
});

test('archive hides a session from the list; the Archived view lists it, and Unarchive brings it back', async () => {
  const page = await open(browser);
  await newChat(page);
  const word = uid();
  await chat(page, `archive me ${word}`, 'You said:');
  const id = await sessionId(page);
  const item = sessionItem(page, id);
  await item.waitFor();

  await page.getByRole('group', { name: 'This session' }).getByRole('button', { name: 'Archive' }).click();
  await item.waitFor({ state: 'detached' });
  await page.locator('[data-testid="archived-note"]').waitFor();
  await until(async () => (await api('GET', `/v1/sessions/${id}`)).body?.archived === true, 'the session is archived on the server');

  const toggle = sidebar(page).getByRole('button', { name: 'Archived' });
  await toggle.click();
  await hasAttr(toggle, 'aria-pressed', 'true');
  await item.waitFor();
  await item.hover();
  await item.getByRole('button', { name: 'Unarchive session' }).click();
  await item.waitFor({ state: 'detached' });
  await page.locator('[data-testid="archived-note"]').waitFor({ state: 'detached' });
  await until(async () => (await api('GET', `/v1/sessions/${id}`)).body?.archived !== true, 'the session is back on the server');
  await toggle.click();
  await hasAttr(toggle, 'aria-pressed', 'false');
  await item.waitFor();
  await page.context().close();
});
