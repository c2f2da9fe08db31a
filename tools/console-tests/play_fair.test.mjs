// A fair human baseline: a person playing sees the world only through the tools
// (each call charged its simulated time). No timeline, files, chats, calendar, task
// checkpoints, scrubber or hint buttons while the run goes; all of it once it ends.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { jsonLines, launch, oracleRun, runIdOf, startServe, tempDir, tid, until } from './lib.mjs';

let tmp;
let oracleDir;
let browser;
const servers = [];

before(async () => {
  tmp = tempDir();
  oracleDir = oracleRun('meeting-only', join(tmp, 'oracle'));
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  for (const s of servers) await s.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

async function post(url, path, body) {
  const res = await fetch(url + path, { method: 'POST', headers: { 'Content-Type': 'application/json', 'X-Tbsim-Console': '1' }, body: JSON.stringify(body) });
  return { status: res.status, body: await res.json() };
}

test('a player sees only what the tools show, and nobody can guide the run', async () => {
  const server = await startServe(join(tmp, 'serve'));
  servers.push(server);
  const { page, errors } = browser;
  await page.goto(`${server.url}/#/play`);
  await page.fill(tid('play-name'), 'tester');
  await page.selectOption(tid('play-scenario'), 'meeting-only');
  await page.click(tid('play-submit'));
  const id = await until(() => runIdOf(page), { what: 'the run view' });
  await page.locator(`${tid('turn-view')}[data-step="0"]`).waitFor({ timeout: 20_000 });
  await page.locator(tid('play-fair-note')).waitFor({ state: 'visible' });
  for (const hidden of ['scrubber', 'timeline', 'tab-files', 'tab-tasks', 'guidance-panel', 'file-tree', 'task-list']) {
    assert.equal(await page.locator(tid(hidden)).isVisible(), false, `${hidden} hidden while playing`);
  }
  // The server refuses the free views and guidance too, whatever the page shows.
  const base = `/v1/console/runs/${encodeURIComponent(id)}`;
  for (const view of ['world', 'timeline?from=0', 'file?path=drive/README.md']) {
    const res = await fetch(`${server.url}${base}/${view}`);
    assert.equal(res.status, 403, view);
    assert.equal((await res.json()).error.code, 'hidden_while_playing');
  }
  const g = await post(server.url, `${base}/guide`, { by: 'tester', kind: 'message', text: 'psst' });
  assert.equal(g.status, 422);
  assert.equal(g.body.error.code, 'guidance_refused');

  // Opening a file is a read_file call: the clock moves by its cost.
  const t0 = await (await fetch(`${server.url}${base}/turn`)).json();
  await page.selectOption(tid('play-tool'), 'read_file');
  await page.locator(tid('arg-read_file-path')).fill('drive/no/such.txt');
  await page.locator(tid('tool-submit')).click();
  await page.locator(`${tid('turn-view')}[data-step="1"]`).waitFor();
  const t1 = await (await fetch(`${server.url}${base}/turn`)).json();
  assert.notEqual(t1.observation.time, t0.observation.time, 'the call cost time');

  // Finish with the oracle's calls over the API; then everything opens.
  const calls = jsonLines(join(oracleDir, 'trajectory.jsonl')).filter((l) => l.type === 'decision')
    .map((d) => ({ tool_calls: d.calls.map((c) => ({ name: c.name, arguments: JSON.parse(c.arguments || '{}') })) }));
  for (const c of calls) {
    const r = await post(server.url, `${base}/act`, c);
    if (r.body.terminated) break;
  }
  await until(async () => (await page.locator(tid('run-state')).getAttribute('data-state')) === 'finished', { what: 'the run to finish' });
  await page.locator(tid('task-list')).waitFor({ timeout: 20_000 });
  await until(async () => (await page.locator(`${tid('timeline')} > li[data-type="end"]`).count()) === 1, { what: 'the timeline after the end' });
  assert.equal(await page.locator(tid('play-fair-note')).isVisible(), false);
  assert.deepEqual(errors, []);
});
