// Workspaces: the list, adding a folder by its path (and a bad path refused
// with the server's message), switching to it; and the cost of a session,
// unknown when its model has no price. (workspaces-switch.test.mjs asks
// about trust, and runs sessions in two workspaces.)
import { after, before, test } from 'node:test';
import {
  api, assert, hasAttr, hasText, idle, launch, newChat, open, send, sessionId, sessionItem, uid, until, WORKSPACE,
} from './helpers.mjs';

// A folder the Go side made for this test (with a file notes.txt in it),
// its symlinks resolved.
const NEW_WORKSPACE = process.env.HEARTH_E2E_NEW_WORKSPACE;

let browser;
before(async () => { browser = await launch(); });
after(async () => { await browser?.close(); });

async function openWorkspaces(page) {
  await page.getByRole('button', { name: 'Workspaces', exact: true }).click();
  const view = page.locator('[data-testid="workspaces"]');
  await view.waitFor();
  await view.getByRole('table', { name: 'Known workspaces' }).waitFor();
  return view;
}

test('a workspace is added through the form, listed, and a bad path is refused with the message', { skip: !NEW_WORKSPACE && 'HEARTH_E2E_NEW_WORKSPACE is not set' }, async () => {
  const page = await open(browser);
  const view = await openWorkspaces(page);
  const form = view.getByRole('form', { name: 'Add workspace' });
  const path = form.getByRole('textbox', { name: 'Path' });
  const add = form.getByRole('button', { name: 'Add workspace' });
  const error = form.locator('[data-testid="add-workspace-error"]');

  // Refused, each with the server's reason; nothing is listed.
  for (const [bad, want] of [
    ['projects/site', 'is not an absolute path'],
    [`${NEW_WORKSPACE}/missing`, 'does not exist'],
    [`${NEW_WORKSPACE}/notes.txt`, 'is a file, not a folder'],
  ]) {
    await path.fill(bad);
    await add.click();
    await hasText(error, want);
    assert.equal(await view.locator(`tr[data-path="${bad}"]`).count(), 0);
  }

  // Added: listed with its name, trust and no sessions; the API has it.
  const name = `Docs ${uid()}`;
  await path.fill(NEW_WORKSPACE);
  await form.getByRole('textbox', { name: 'Name' }).fill(name);
  await form.getByRole('radio', { name: 'Read-only' }).check();
  await add.click();
  await error.waitFor({ state: 'hidden' });
  const row = view.locator(`tr[data-path="${NEW_WORKSPACE}"]`);
  await hasText(row, name);
  await hasText(row, 'read-only');
  assert.equal((await row.locator('td.num').textContent())?.trim(), '0');
  const { body } = await api('GET', '/v1/workspaces');
  const listed = body.workspaces.find((w) => w.path === NEW_WORKSPACE);
  assert.ok(listed, `GET /v1/workspaces lists ${NEW_WORKSPACE}`);
  assert.equal(listed.name, name);
  assert.equal(listed.trust, 'read-only');
  assert.equal(listed.trust_chosen, true);
  await hasText(page.locator('[data-testid="workspace-added"]'), 'read-only');

  // It stays listed after a reload.
  await page.reload();
  const again = await openWorkspaces(page);
  await hasText(again.locator(`tr[data-path="${NEW_WORKSPACE}"]`), name);

  // Switched to: the switcher and the header name it, with its trust (chosen:
  // nothing asked); its sessions, none. Back to the server's own.
  await again.locator(`tr[data-path="${NEW_WORKSPACE}"]`).getByRole('button', { name: 'Switch to it' }).click();
  await again.waitFor({ state: 'detached' });
  const switcher = page.getByRole('combobox', { name: 'Workspace' });
  await until(async () => (await switcher.inputValue()) === NEW_WORKSPACE, 'the switcher shows the folder switched to');
  const header = page.locator('[data-testid="current-workspace"]');
  await hasText(header, name);
  await hasText(header, 'Read-only');
  await hasAttr(page.locator('[data-testid="workspace-trust"]'), 'data-chosen', 'true');
  await hasText(page.locator('.session-list'), 'No sessions yet.');
  assert.equal(await page.getByRole('dialog').count(), 0, 'nothing is asked about a folder whose trust was chosen');
  const def = (await api('GET', '/v1/workspaces')).body.default;
  await switcher.selectOption(def);
  await hasText(page.locator('[data-testid="workspace-switcher"]'), def);
  await until(async () => !(await header.textContent()).includes(name), 'the header names the server\'s own workspace again');
  await page.context().close();
});

test('the server\'s workspace lists its sessions, and a session without a price shows its cost as unknown', async () => {
  const page = await open(browser);
  await newChat(page);
  const prompt = `[think] Go maps, priced ${uid()}`;
  await send(page, prompt);
  await idle(page);
  const id = await sessionId(page);
  await hasText(page.locator('[data-testid="session-cost"]'), 'Cost of this session: unknown');

  const view = await openWorkspaces(page);
  const row = view.locator('tr').filter({ has: page.locator('code', { hasText: WORKSPACE }) });
  await until(async () => (await row.count()) > 0, `the server's workspace ${WORKSPACE} is listed`);
  // It is the current workspace, whose sessions the sidebar lists.
  await hasAttr(row.first().getByRole('button', { name: 'Current workspace' }), 'aria-pressed', 'true');
  await sessionItem(page, id).waitFor();
  await hasText(page.locator('[data-testid="workspace-switcher"]'), WORKSPACE);

  // The usage view: the cost is unknown, never 0.
  await page.getByRole('button', { name: 'Usage', exact: true }).click();
  const usage = page.locator('[data-testid="usage"]');
  await hasText(usage.locator('[data-testid="usage-total-cost"]'), /unknown|≥/);
  await hasText(usage.locator('[data-testid="usage-models"]'), /unknown|≥/);
  await page.context().close();
});
