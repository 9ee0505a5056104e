// The workspace switcher and the trust question, on a server of their own
// (TestWebUI starts it) whose workspace was never seen: the page asks once
// a load how far the folder is trusted; a second folder is added by its
// path, asked about, switched to, and a session runs there; each workspace
// lists its own sessions, and the choice survives a reload. The tests run
// in order: the second needs the first's answer.
import { basename } from 'node:path';
import { after, before, test } from 'node:test';
import {
  api, assert, chat, hasAttr, hasText, launch, messageBox, newChat, open, sessionId, sessionItem, uid, until,
} from './helpers.mjs';

const server = { base: process.env.HEARTH_E2E_FRESH_URL, token: process.env.HEARTH_E2E_FRESH_TOKEN };
// A folder the Go side made (with a README.md in it), its symlinks resolved.
const SECOND = process.env.HEARTH_E2E_SWITCH_WORKSPACE;
const skip = !(server.base && server.token && SECOND) &&
  'HEARTH_E2E_FRESH_URL, HEARTH_E2E_FRESH_TOKEN or HEARTH_E2E_SWITCH_WORKSPACE is not set';

let browser;
before(async () => { if (!skip) browser = await launch(); });
after(async () => { await browser?.close(); });

/** GET /v1/workspaces of this test's server. */
async function workspaces() {
  const { status, body } = await api('GET', '/v1/workspaces', undefined, server);
  assert.equal(status, 200, JSON.stringify(body));
  return body;
}

/** The workspace of path as the server lists it (undefined: not listed). */
async function listed(path) {
  return (await workspaces()).workspaces.find((w) => w.path === path);
}

const trustDialog = (page) => page.getByRole('dialog', { name: 'Do you trust this folder?' });
const switcher = (page) => page.getByRole('combobox', { name: 'Workspace' });
const trustBadge = (page) => page.locator('[data-testid="workspace-trust"]');

/** The ids of the sessions the sidebar lists, in order. */
function listedSessions(page) {
  return page.locator('[data-testid="session-item"]').evaluateAll((els) => els.map((el) => el.dataset.sessionId));
}

/** Waits until the sidebar lists exactly the sessions ids (in any order). */
async function listsExactly(page, ids, what) {
  let got = [];
  await until(async () => {
    got = await listedSessions(page);
    return got.length === ids.length && ids.every((id) => got.includes(id));
  }, () => `the sidebar lists ${what} (${ids.join(', ')}); it lists ${JSON.stringify(got)}`);
}

/** Waits for the page to have read the workspaces (the switcher's trust badge), then a moment more for a question to come. */
async function settled(page) {
  await trustBadge(page).waitFor();
  await page.waitForTimeout(1000); // the question comes 300 ms after the switcher rests
}

test('the never-seen workspace: asked once a load, "Decide later" keeps it untrusted, a failed save is shown, the answer is saved', { skip }, async () => {
  const first = await workspaces();
  const def = first.default;
  assert.equal(first.multiple, true, 'hearth serve serves every workspace');
  assert.ok(def, 'the server names its own workspace');
  assert.notEqual((await listed(def))?.trust_chosen, true, 'the trust of the server\'s workspace was never chosen');

  const page = await open(browser, server);
  let dialog = trustDialog(page);
  await dialog.waitFor();
  await hasText(dialog, def);
  // The three levels, each explained.
  for (const want of ['.hearth/config.toml', 'providers, and MCP servers', 'read-only sandbox', 'only tighten', 'above “default” are not available']) {
    await hasText(dialog, want);
  }
  // The focus is in the dialog, on the level it has now.
  await until(() => page.evaluate(() => !!document.activeElement?.closest('[role="dialog"]') && document.activeElement.getAttribute('value')) .then((v) => v === 'untrusted'),
    'the focus is on the dialog\'s checked level, untrusted');
  await hasAttr(trustBadge(page), 'data-chosen', 'false');

  // Decided later: nothing saved, and not asked again in this load.
  await dialog.getByRole('button', { name: 'Decide later' }).click();
  await dialog.waitFor({ state: 'detached' });
  assert.notEqual((await listed(def))?.trust_chosen, true, '"Decide later" chooses nothing');
  await page.waitForTimeout(1000);
  assert.equal(await trustDialog(page).count(), 0, 'asked once a load');
  await hasAttr(trustBadge(page), 'data-trust', 'untrusted');

  // Asked again on the next load. A save that fails is shown in the dialog,
  // the choice kept; saved again, it holds.
  await page.reload();
  dialog = trustDialog(page);
  await dialog.waitFor();
  await page.route('**/v1/workspaces', (route) => (route.request().method() === 'POST'
    ? route.fulfill({ status: 500, contentType: 'application/json', body: JSON.stringify({ error: { code: 'store_error', message: 'the session store failed: disk full' } }) })
    : route.continue()));
  await dialog.getByRole('radio', { name: 'Trusted', exact: true }).check();
  await dialog.getByRole('button', { name: 'Save' }).click();
  await hasText(dialog.getByRole('alert'), 'the session store failed: disk full');
  assert.ok(await dialog.getByRole('radio', { name: 'Trusted', exact: true }).isChecked(), 'the choice is kept');
  assert.notEqual((await listed(def))?.trust_chosen, true, 'nothing was saved');
  await page.unroute('**/v1/workspaces');
  await dialog.getByRole('button', { name: 'Save' }).click();
  await dialog.waitFor({ state: 'detached' });

  const w = await listed(def);
  assert.deepEqual([w?.trust, w?.trust_chosen], ['trusted', true], `GET /v1/workspaces: ${JSON.stringify(w)}`);
  // The page's own request says the same.
  const fromPage = await page.evaluate(async (token) => {
    const r = await fetch('/v1/workspaces', { headers: { Authorization: `Bearer ${token}` } });
    return r.json();
  }, server.token);
  const seen = fromPage.workspaces.find((x) => x.path === def);
  assert.deepEqual([seen?.trust, seen?.trust_chosen], ['trusted', true]);
  await hasAttr(trustBadge(page), 'data-trust', 'trusted');
  await hasAttr(trustBadge(page), 'data-chosen', 'true');
  await hasText(page.locator('[data-testid="current-workspace"]'), 'Trusted');

  // Chosen: not asked on the next load.
  await page.reload();
  await settled(page);
  assert.equal(await trustDialog(page).count(), 0, 'a chosen trust is not asked about');
  await page.context().close();
});

test('a second folder: a bad path refused, added, asked about, switched to, a turn run there; each workspace lists its own sessions; the choice is remembered', { skip }, async () => {
  const def = (await workspaces()).default;
  const page = await open(browser, server);
  await settled(page);
  assert.equal(await trustDialog(page).count(), 0, 'the first test answered the question');

  // A session in the server's own workspace.
  const wordA = uid();
  await newChat(page);
  await chat(page, `in the first workspace ${wordA}`, `You said: in the first workspace ${wordA}`);
  const a = await sessionId(page);
  assert.equal((await api('GET', `/v1/sessions/${a}`, undefined, server)).body.workspace, def);

  // The second folder, added by its path; bad ones refused with the server's reason.
  await page.getByRole('button', { name: 'Workspaces', exact: true }).click();
  const view = page.locator('[data-testid="workspaces"]');
  await view.getByRole('table', { name: 'Known workspaces' }).waitFor();
  const form = view.getByRole('form', { name: 'Add workspace' });
  const path = form.getByRole('textbox', { name: 'Path' });
  const add = form.getByRole('button', { name: 'Add workspace' });
  const error = form.locator('[data-testid="add-workspace-error"]');
  for (const [bad, want] of [
    ['relative/folder', 'is not an absolute path'],
    [`${SECOND}/README.md`, 'is a file, not a folder'],
    ['/', 'the filesystem root'],
  ]) {
    await path.fill(bad);
    await add.click();
    await hasText(error, want);
  }
  assert.equal(await listed(SECOND), undefined, 'nothing was added');
  // Its trust left unchosen: asked when switched to.
  await path.fill(SECOND);
  await add.click();
  const added = view.locator('[data-testid="workspace-added"]');
  await hasText(added, SECOND);
  let w2 = await listed(SECOND);
  assert.deepEqual([w2?.trust, w2?.trust_chosen], ['untrusted', false], JSON.stringify(w2));
  await added.getByRole('button', { name: 'Switch to it' }).click();
  await view.waitFor({ state: 'detached' });

  const dialog = trustDialog(page);
  await dialog.waitFor();
  await hasText(dialog, SECOND);
  await dialog.getByRole('radio', { name: 'Read-only' }).check();
  await dialog.getByRole('button', { name: 'Save' }).click();
  await dialog.waitFor({ state: 'detached' });
  w2 = await listed(SECOND);
  assert.deepEqual([w2?.trust, w2?.trust_chosen], ['read-only', true], JSON.stringify(w2));

  // Switched: the switcher and the header name it, with its trust; the
  // open session of the other workspace is left for a new chat; none of
  // the other workspace's sessions is listed.
  await until(async () => (await switcher(page).inputValue()) === SECOND, 'the switcher shows the second folder');
  const header = page.locator('[data-testid="current-workspace"]');
  await hasText(header, basename(SECOND));
  await hasText(header, 'Read-only');
  await hasAttr(trustBadge(page), 'data-trust', 'read-only');
  await until(() => new URL(page.url()).pathname === '/', 'a new chat, in the second folder');
  await hasText(page.locator('.session-list'), 'No sessions yet.');

  // A session there, made by the first message, with a turn of the fake model.
  const wordB = uid();
  await chat(page, `in the second workspace ${wordB}`, `You said: in the second workspace ${wordB}`);
  const b = await sessionId(page);
  assert.equal((await api('GET', `/v1/sessions/${b}`, undefined, server)).body.workspace, SECOND, 'the session is in the second folder');
  await listsExactly(page, [b], 'the second folder\'s session only');
  const inB = (await api('GET', `/v1/sessions?workspace=${encodeURIComponent(SECOND)}`, undefined, server)).body.sessions.map((s) => s.id);
  assert.deepEqual(inB, [b]);

  // Back to the server's own: its session only.
  await switcher(page).selectOption(def);
  await listsExactly(page, [a], 'the first workspace\'s session only');
  await until(() => new URL(page.url()).pathname === '/', 'the second folder\'s session is left for a new chat');
  await hasAttr(trustBadge(page), 'data-trust', 'trusted');

  // Every workspace's, each named by its workspace; then the current one's again.
  const all = page.getByRole('button', { name: 'All workspaces' });
  await all.click();
  await hasAttr(all, 'aria-pressed', 'true');
  await listsExactly(page, [a, b], 'both workspaces\' sessions');
  await hasText(sessionItem(page, b).locator('[data-testid="session-workspace"]'), basename(SECOND));
  await all.click();
  await hasAttr(all, 'aria-pressed', 'false');
  await listsExactly(page, [a], 'the first workspace\'s session only');

  // The choice is remembered: after a reload the second folder is current,
  // nothing asked.
  await switcher(page).selectOption(SECOND);
  await listsExactly(page, [b], 'the second folder\'s session only');
  await page.reload();
  await messageBox(page).waitFor();
  await until(async () => (await switcher(page).inputValue()) === SECOND, 'the switcher still shows the second folder after a reload');
  await listsExactly(page, [b], 'the second folder\'s session only, after a reload');
  await settled(page);
  assert.equal(await trustDialog(page).count(), 0, 'nothing is asked about a chosen trust');

  // A session of the other workspace opened by its address makes that one current.
  await page.goto(`${server.base}/s/${a}`);
  await until(async () => (await switcher(page).inputValue()) === def, 'opening the first workspace\'s session switches to it');
  await listsExactly(page, [a], 'the first workspace\'s session only');
  await hasAttr(sessionItem(page, a).getByRole('button', { name: `in the first workspace ${wordA}` }), 'aria-current', 'page');
  await page.context().close();
});
