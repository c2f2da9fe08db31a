// `tbsim view` names runs from their folders (batch / scenario / trial), lists them
// in natural order, and a fork's link to its parent opens the parent.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { after, before, test } from 'node:test';

import { api, launch, runIdOf, startView, tbsimSync, tempDir, tid, until } from './lib.mjs';

let tmp;
let batch;
let browser;
const servers = [];

before(async () => {
  tmp = tempDir();
  batch = join(tmp, 'nightly');
  const r = tbsimSync(['run', 'content/scenarios/meeting-only.ron', '--agent', 'oracle', '--trials', '11', '--out', batch]);
  if (r.status !== 0) throw new Error(`tbsim run failed (${r.status}):\n${r.stderr}`);
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  for (const s of servers) await s.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test('runs are named from their folders in natural order; a fork links to its parent', async () => {
  const server = await startView([batch], join(tmp, 'forks'));
  servers.push(server);
  const { page, errors } = browser;
  const { runs } = await api(server.url, '/v1/console/runs');
  const ids = runs.map((r) => r.id);
  const want = Array.from({ length: 11 }, (_, t) => `${basename(batch)}:meeting-only:trial-${t}`);
  assert.deepEqual(ids, want);

  await page.goto(`${server.url}/#/`);
  await page.locator(tid(`run-row-${want[10]}`)).waitFor({ timeout: 20_000 });
  const shown = await page.locator(`${tid('runs-body')} > tr.run`).evaluateAll((trs) => trs.map((t) => t.dataset.testid.replace(/^run-row-/, '')));
  assert.deepEqual(shown, want, 'the page lists them in natural order');

  // A fork made in the viewer names its parent by the parent's id.
  const parent = want[3];
  const f = await api(server.url, `/v1/console/runs/${encodeURIComponent(parent)}/fork`, { method: 'POST', body: { step: 1, agent: 'oracle' } });
  const d = await until(async () => {
    const x = await api(server.url, `/v1/console/runs/${encodeURIComponent(f.id)}`);
    return x.fork ? x : null;
  }, { what: 'the fork' });
  assert.equal(d.fork.parent, parent);
  await page.goto(`${server.url}/#/run/${encodeURIComponent(f.id)}`);
  const link = page.locator(`${tid('run-sub')} a`);
  await link.waitFor({ timeout: 20_000 });
  await link.click();
  await until(() => runIdOf(page) === parent, { what: 'the parent’s view' });
  await page.locator(tid('task-list')).waitFor({ timeout: 20_000 });
  assert.equal(await page.locator(tid('run-error')).isVisible(), false);
  assert.deepEqual(errors, []);
});
