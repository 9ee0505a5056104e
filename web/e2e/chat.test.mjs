// A turn with reasoning and a Markdown answer; the header's model picker and
// provider status; the keyboard.
import { after, before, test } from 'node:test';
import {
  answerBody, api, assert, hasAttr, hasText, idle, lastAnswer, launch, messageBox, messages, newChat, open, send,
  sessionId, uid, until,
} from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

test('thinking shows open while the model reasons, then the answer in Markdown with the panel closed', async () => {
  const page = await open(browser);
  await newChat(page);
  await send(page, 'How do maps in Go work?');
  const answer = lastAnswer(page);
  const thinking = answer.locator('details[data-testid="thinking"]');
  // Open while reasoning (the fake reasons for 2 s before answering).
  await thinking.waitFor();
  await hasAttr(thinking, 'open', '');
  await hasText(thinking, 'The user asks about Go maps.');
  // The answer, rendered: bold, inline code, and a highlighted code block.
  const body = answer.locator('[data-testid="answer"]');
  await body.locator('.hljs').first().waitFor();
  await hasAttr(thinking, 'open', null);
  await idle(page);
  await hasText(body, 'Reading a missing key gives the zero value.');
  assert.equal(await body.locator('strong', { hasText: 'map' }).count(), 1, 'the **map** is bold');
  assert.ok(await body.locator('pre code.hljs, pre .hljs').count() >= 1, 'the Go block is highlighted');
  assert.ok(!(await body.textContent()).includes('```'), 'no raw fences in the answer');
  assert.ok((await thinking.textContent()).includes('I should show how to make one'), 'the whole reasoning is kept');
  // The session is in the address.
  await sessionId(page);
  await page.context().close();
});

test('the model picker lists the server\'s models and the provider is reachable', async () => {
  const page = await open(browser);
  const { status, body } = await api('GET', '/v1/models');
  assert.equal(status, 200);
  const names = body.models.map((m) => m.name).sort();
  assert.ok(names.length >= 2, `the fake has two models: ${names}`);
  const picker = page.locator('select[aria-label="Model"]');
  let options = [];
  await until(async () => {
    options = (await picker.locator('option').evaluateAll((os) => os.map((o) => o.value))).sort();
    return names.every((n) => options.includes(n));
  }, () => `the picker lists ${names}; it lists ${options}`);
  const other = names.find((n) => n !== body.default) ?? names[1];
  await picker.selectOption(other);
  assert.equal(await picker.inputValue(), other);
  await hasAttr(page.locator('[data-testid="provider-status"]'), 'data-reachable', 'true');
  await page.context().close();
});

test('keyboard: Tab reaches the message box, Shift+Enter is a new line, Enter sends', async () => {
  const page = await open(browser);
  await newChat(page);
  await page.evaluate(() => document.activeElement?.blur());
  const box = messageBox(page);
  let reached = false;
  for (let i = 0; i < 40 && !reached; i++) {
    await page.keyboard.press('Tab');
    reached = await box.evaluate((el) => el === document.activeElement);
  }
  assert.ok(reached, 'Tab reaches the message box within 40 presses');
  const id = uid();
  await page.keyboard.type('first line');
  await page.keyboard.press('Shift+Enter');
  await page.keyboard.type(`second ${id}`);
  assert.equal(await box.inputValue(), `first line\nsecond ${id}`);
  assert.equal(await messages(page).count(), 0, 'Shift+Enter does not send');
  await page.keyboard.press('Enter');
  await hasText(messages(page, 'user').last(), `second ${id}`);
  await hasText(answerBody(page), 'You said:');
  await idle(page);
  await page.context().close();
});
