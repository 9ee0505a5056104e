// The model's plan (update_plan): the checklist above the conversation
// follows a turn live, step by step, and comes back from the session on a
// reload; the tool's calls are quiet lines; a reminder strict_plan sent is
// Hearth's note, not a prompt of the user's.
//
// The fake model (webModel in cmd/hearth/web_e2e_test.go): "[plan]" plans
// three steps and marks each in progress, then done, one reply at a time
// with a pause before each; "[planskip]" answers with a step open, is sent
// back (strict_plan is on), and skips it.
import { after, before, test } from 'node:test';
import {
  answerBody, api, assert, hasAttr, hasText, idle, lastAnswer, launch, messageBox, messages, newChat, open, send,
  sessionId, text, uid, until,
} from './helpers.mjs';

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

/** The plan panel. */
const panel = (page) => page.locator('[data-testid="plan"]');
const planSteps = (page) => panel(page).locator('[data-testid="plan-step"]');

/**
 * record makes the page note each state of the checklist it shows (the
 * steps' statuses, and the step marked current), as the DOM changes: a
 * state the page shows for a single frame is noted too, however loaded the
 * machine that runs the test.
 */
async function record(page) {
  await page.evaluate(() => {
    const seen = [];
    window.planSeen = seen;
    const note = () => {
      const items = [...document.querySelectorAll('[data-testid="plan-step"]')];
      if (items.length === 0) return;
      const state = {
        statuses: items.map((li) => li.dataset.status).join(','),
        current: items.filter((li) => li.getAttribute('aria-current') === 'step').map((li) => li.textContent).join('|'),
      };
      const last = seen[seen.length - 1];
      if (!last || last.statuses !== state.statuses || last.current !== state.current) seen.push(state);
    };
    new MutationObserver(note).observe(document.body, { subtree: true, childList: true, characterData: true, attributes: true });
  });
}

/** seen is what record noted so far. */
const seen = (page) => page.evaluate(() => window.planSeen);

/** shown waits until the page has shown the checklist with these statuses. */
async function shown(page, statuses) {
  await until(async () => (await seen(page)).some((s) => s.statuses === statuses),
    async () => `the checklist shows ${statuses}; it has shown ${JSON.stringify(await seen(page))}`);
}

test('the checklist follows the turn step by step, and comes back on a reload', async () => {
  const page = await open(browser);
  await newChat(page);
  await record(page);
  assert.equal(await panel(page).count(), 0, 'no plan, no panel');
  const word = uid();
  await send(page, `[plan] summarise the notes ${word}`);

  // Each state in turn, as the model's replies come: pending, then each
  // step in progress, then done.
  const states = [
    'pending,pending,pending',
    'in_progress,pending,pending',
    'done,in_progress,pending',
    'done,done,in_progress',
    'done,done,done',
  ];
  for (const s of states) await shown(page, s);
  const all = await seen(page);
  assert.deepEqual(all.map((s) => s.statuses), states, 'the checklist went through each state once, in order');
  // The step in progress is the list's current one, labelled in words.
  assert.deepEqual(all.map((s) => s.current), [
    '',
    'In progress: Read the notesIn progress',
    'In progress: Write the summaryIn progress',
    'In progress: Check the summaryIn progress',
    '',
  ]);

  await hasText(answerBody(page), 'All three steps are done.');
  await idle(page);
  await hasText(panel(page).getByTestId('plan-count'), '3/3');
  const list = panel(page).getByRole('list', { name: 'Plan steps, 3 of 3 steps finished' });
  assert.deepEqual((await list.getByRole('listitem').allTextContents()), [
    'Done: Read the notes', 'Done: Write the summary', 'Done: Check the summary',
  ]);
  // The tool's calls are quiet lines in the conversation.
  const lines = lastAnswer(page).locator('[data-testid="tool-card"][data-tool="update_plan"]');
  const quiet = ['Plan updated: 0/3', 'Plan updated: 0/3', 'Plan updated: 1/3', 'Plan updated: 2/3', 'Plan updated: 3/3'];
  assert.deepEqual((await lines.allTextContents()).map((t) => t.trim()), quiet);
  assert.equal(await lines.getByRole('button').count(), 0, 'a plan line has no buttons');
  // The panel stays in view as the conversation scrolls.
  assert.equal(await panel(page).evaluate((el) => getComputedStyle(el).position), 'sticky');

  // A reload shows the plan again, from the session.
  const id = await sessionId(page);
  await page.reload();
  await messageBox(page).waitFor();
  await hasText(answerBody(page), 'All three steps are done.');
  await hasText(panel(page).getByTestId('plan-count'), '3/3');
  await until(async () => (await planSteps(page).evaluateAll((els) => els.map((e) => e.dataset.status).join(','))) === 'done,done,done',
    'the reloaded checklist has every step done');
  assert.deepEqual((await lastAnswer(page).locator('[data-testid="tool-card"][data-tool="update_plan"]').allTextContents()).map((t) => t.trim()), quiet);
  const stored = await api('GET', `/v1/sessions/${id}`);
  assert.deepEqual(stored.body.plan.steps.map((s) => s.status), ['done', 'done', 'done']);

  // Folded, it keeps its header.
  const toggle = panel(page).getByRole('button', { name: /^Plan/ });
  await toggle.click();
  await hasAttr(toggle, 'aria-expanded', 'false');
  assert.equal(await planSteps(page).count(), 0);
  assert.match(await text(toggle), /^Plan\s*3\/3: 3 of 3 steps finished$/);
  await toggle.click();
  await hasAttr(toggle, 'aria-expanded', 'true');
  await until(async () => (await planSteps(page).count()) === 3, 'the unfolded checklist has its three steps');

  // A new chat has no plan.
  await newChat(page);
  assert.equal(await panel(page).count(), 0, 'a new chat shows no plan');
  await page.context().close();

  // On a phone-sized screen the panel fits, above the conversation.
  const phone = await open(browser, { viewport: { width: 390, height: 844 }, path: `/s/${id}` });
  await hasText(panel(phone).getByTestId('plan-count'), '3/3');
  const box = await panel(phone).boundingBox();
  assert.ok(box && box.x >= 0 && box.x + box.width <= 390, `the panel fits the screen: ${JSON.stringify(box)}`);
  assert.ok(await phone.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth), 'nothing scrolls sideways');
  await phone.context().close();
});

test('a reminder is Hearth’s note, not a prompt: live and after a reload', async () => {
  const page = await open(browser);
  await newChat(page);
  const word = uid();
  await send(page, `[planskip] fix the typo ${word}`);
  const note = lastAnswer(page).locator('[data-testid="plan-reminder"]');
  await hasText(note, 'Hearth sent the model back: 1 step open');
  await hasText(answerBody(page), 'there were no other files to check');
  await idle(page);

  const check = async (when) => {
    assert.equal(await messages(page, 'user').count(), 1, `${when}: the reminder is not shown as a user message`);
    assert.equal(await note.getByRole('button').count(), 0, `${when}: the note offers no rewind`);
    assert.equal(await page.getByRole('note', { name: 'Note from Hearth' }).count(), 1, `${when}: one note from Hearth`);
    // Its words are behind a disclosure.
    await note.locator('summary').click();
    await hasText(note, 'Hearth told the model: Your plan still has 1 open step(s)');
    await hasText(panel(page).getByTestId('plan-count'), '2/2');
    const skipped = planSteps(page).nth(1);
    await hasAttr(skipped, 'data-status', 'skipped');
    assert.equal(await text(skipped), 'Skipped: Check the other filesskipped: there are no other files');
    // The prompt's own actions are still there: one "Rewind to before this".
    await until(async () => (await page.getByRole('button', { name: 'Rewind to before this' }).count()) === 1,
      `${when}: one prompt to rewind to`);
  };
  await check('live');
  const id = await sessionId(page);
  const stored = await api('GET', `/v1/sessions/${id}`);
  const reminders = stored.body.messages.filter((m) => m.reminder);
  assert.equal(reminders.length, 1, 'the session keeps the reminder, marked as Hearth\'s');
  assert.equal(reminders[0].role, 'user');

  await page.reload();
  await messageBox(page).waitFor();
  await hasText(answerBody(page), 'there were no other files to check');
  await hasText(note, 'Hearth sent the model back: 1 step open');
  await check('reloaded');

  // A rewind to before the prompt takes the plan back with the
  // conversation: the session has none now.
  await page.getByRole('button', { name: 'Rewind to before this' }).click();
  const dialog = page.getByRole('dialog');
  await hasText(dialog.locator('[data-testid="restore-conversation"]'), 'loses the');
  await dialog.getByRole('button', { name: 'Rewind', exact: true }).click();
  await dialog.waitFor({ state: 'hidden' });
  await until(async () => (await messages(page).count()) === 0, 'no message is left after the rewind');
  await until(async () => (await panel(page).count()) === 0, 'the plan went with the conversation');
  assert.equal((await api('GET', `/v1/sessions/${id}`)).body.plan, null);
  await page.context().close();
});
