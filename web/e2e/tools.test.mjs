// A tool call that needs approval: allowed, then denied.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import {
  answerBody, assert, hasAttr, hasText, idle, lastAnswer, launch, newChat, open, send, uid, WORKSPACE,
} from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

/**
 * approval sends a prompt calling write_file on note-WORD.txt (WORD: its
 * last word) and waits for the card to ask; it returns the card.
 */
async function approval(page, prompt) {
  await newChat(page);
  await send(page, prompt);
  const card = lastAnswer(page).locator('[data-testid="tool-card"][data-tool="write_file"]');
  await card.waitFor();
  await hasAttr(card, 'data-state', 'approval');
  for (const name of ['Allow', 'Always allow', 'Deny']) {
    await card.getByRole('button', { name, exact: true }).waitFor();
  }
  return card;
}

test('Allow runs the call: the card ends done, then the answer comes', async () => {
  const page = await open(browser);
  // In plain words, for the screenshot; the workspace is new for each run.
  const card = await approval(page, 'Save a note about the plan');
  await card.getByRole('button', { name: 'Allow', exact: true }).click();
  await hasAttr(card, 'data-state', 'done');
  await hasText(answerBody(page), 'I wrote note-plan.txt.');
  await idle(page);
  assert.equal(await card.getByRole('button', { name: 'Allow', exact: true }).count(), 0, 'the buttons are gone');
  const file = join(WORKSPACE, 'note-plan.txt');
  assert.ok(existsSync(file), `${file} was written`);
  assert.equal(readFileSync(file, 'utf8'), 'a note from the web UI test\n');
  await page.context().close();
});

test('Deny refuses the call: the card ends failed, and the model still answers', async () => {
  const page = await open(browser);
  const id = uid();
  const card = await approval(page, `[tool] write a note ${id}`);
  await card.getByRole('button', { name: 'Deny', exact: true }).click();
  await hasAttr(card, 'data-state', 'failed');
  await hasText(answerBody(page), 'You denied the write');
  await idle(page);
  const file = join(WORKSPACE, `note-${id}.txt`);
  assert.ok(!existsSync(file), `${file} was not written`);
  await page.context().close();
});

test('a call that fails at once is still seen in its running state, for a frame at least', async () => {
  const page = await open(browser);
  await newChat(page);
  // Sample every tool card's state at every animation frame: what the user
  // could have seen.
  await page.evaluate(() => {
    window.__states = [];
    const sample = () => {
      for (const card of document.querySelectorAll('[data-testid="tool-card"]')) {
        const s = card.getAttribute('data-state');
        if (window.__states[window.__states.length - 1] !== s) window.__states.push(s);
      }
      requestAnimationFrame(sample);
    };
    requestAnimationFrame(sample);
  });
  await send(page, `[read] the missing file ${uid()}`);
  const card = lastAnswer(page).locator('[data-testid="tool-card"][data-tool="read_file"]');
  await hasAttr(card, 'data-state', 'failed');
  await hasText(answerBody(page), 'That file is not there.');
  await idle(page);
  const states = await page.evaluate(() => window.__states);
  assert.deepEqual(states, ['pending', 'failed'], `the card's states, frame by frame: ${JSON.stringify(states)}`);
  await page.context().close();
});
