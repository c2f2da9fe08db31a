// Hidden data: a finished run's view shows no checkpoint description unless the
// "show answers" switch (view mode only) is on; serve mode refuses answers.

import assert from 'node:assert/strict';
import { readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { ROOT, api, launch, oracleRun, startServe, startView, tempDir, tid, until } from './lib.mjs';

let tmp;
let oracleDir;
let browser;
const servers = [];

before(async () => {
  tmp = tempDir();
  oracleDir = oracleRun('busy-day', join(tmp, 'busy-day'));
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  for (const s of servers) await s.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** Every `description: "…"` string of the scenario file (tasks' and checkpoints'). */
function scenarioDescriptions(file) {
  const text = readFileSync(file, 'utf8');
  return Array.from(text.matchAll(/description:\s*"((?:[^"\\]|\\.)*)"/g), (m) => JSON.parse(`"${m[1]}"`));
}

test('answers stay hidden unless switched on, in view mode only', async () => {
  const server = await startView([oracleDir], join(tmp, 'forks'));
  servers.push(server);
  const { page, errors } = browser;
  const { runs } = await api(server.url, '/v1/console/runs');
  const id = runs[0].id;
  const base = `/v1/console/runs/${encodeURIComponent(id)}`;
  const info = await api(server.url, '/v1/console/info');
  assert.equal(info.mode, 'view');
  assert.equal(info.answers_allowed, true);

  // The checkpoint descriptions, from the API's answers and from the scenario file.
  const w = await api(server.url, `${base}/world?answers=1`);
  const fromApi = w.tasks.flatMap((t) => t.checkpoints.map((c) => c.description)).filter((d) => d && d.length > 8);
  assert.ok(fromApi.length > 0, 'descriptions with answers=1');
  const fromFile = new Set(scenarioDescriptions(join(oracleDir, 'scenario.ron')));
  assert.ok(fromApi.some((d) => fromFile.has(d)), 'the API’s descriptions are the scenario’s');
  const plain = await api(server.url, `${base}/world`);
  assert.ok(plain.tasks.every((t) => t.checkpoints.every((c) => c.description === undefined || c.description === null)), 'none without answers');

  await page.goto(`${server.url}/#/run/${encodeURIComponent(id)}`);
  await page.locator(tid('task-list')).waitFor({ timeout: 20_000 });
  await until(async () => (await page.locator(`${tid('timeline')} > li[data-type="end"]`).count()) === 1, { what: 'the whole timeline' });
  // Every panel rendered, then the page's text (hidden parts included).
  for (const tab of ['files', 'chats', 'calendar', 'tasks']) await page.click(tid(`tab-${tab}`));
  let text = await page.evaluate(() => document.body.textContent);
  for (const d of fromApi) assert.ok(!text.includes(d), `hidden answer shown: ${d}`);
  assert.equal(await page.locator(tid('cp-description')).count(), 0);

  // Switched on: the descriptions appear.
  const box = page.locator(tid('answers-toggle'));
  await box.waitFor({ state: 'visible' });
  await box.check();
  await until(async () => (await page.locator(tid('cp-description')).count()) >= fromApi.length, { what: 'the checkpoint descriptions' });
  text = await page.evaluate(() => document.body.textContent);
  for (const d of fromApi) assert.ok(text.includes(d), `answer not shown: ${d}`);
  // The answer itself, not only the rubric: the value the check expects, beside
  // what the agent wrote where the check reads (issue 40, item 10).
  const cp = page.locator(tid('cp-decision_recorded'));
  await until(async () => (await cp.locator(tid('cp-expected')).count()) === 1, { what: 'the expected value' });
  const expected = await cp.locator(tid('cp-expected')).textContent();
  const want = w.tasks.flatMap((t) => t.checkpoints).find((c) => c.key === 'decision_recorded').expected.JsonNumber.expected;
  assert.ok(typeof want === 'number', 'the API gives the expected value');
  assert.ok(readFileSync(join(oracleDir, 'scenario.ron'), 'utf8').includes(`expected: ${want.toFixed(1)}`), 'the scenario’s value');
  assert.match(expected, /JsonNumber/);
  assert.ok(expected.includes(`"expected":${want}`), expected);
  assert.match(expected, /"pointer":"\/budget_cap"/);
  assert.equal(await cp.locator(tid('cp-actual')).textContent(), `Agent wrote ${want}`);
  // At step 1, before the oracle wrote the file: nothing there yet.
  await page.goto(`${server.url}/#/run/${encodeURIComponent(id)}/step/1`);
  await until(async () => (await page.locator(tid('world-note')).getAttribute('data-step')) === '1', { what: 'the world at step 1' });
  if (!(await box.isChecked())) await box.check();
  await until(async () => /no such file/.test((await cp.locator(tid('cp-actual')).textContent().catch(() => '')) || ''), { what: 'no file at step 1' });
  // Without answers the world carries no expected value.
  assert.ok(plain.tasks.every((t) => t.checkpoints.every((c) => c.expected === undefined && c.actual === undefined)), 'no expected value without answers');
  // Off again: gone.
  await box.uncheck();
  await until(async () => (await page.locator(tid('cp-description')).count()) === 0, { what: 'the descriptions to go' });
  assert.deepEqual(errors, [], 'no script errors');
});

test('serve mode has no answers switch and refuses answers=1', async () => {
  const out = join(tmp, 'serve');
  const server = await startServe(out);
  servers.push(server);
  const { page } = browser;
  const info = await api(server.url, '/v1/console/info');
  assert.equal(info.answers_allowed, false);
  const { id } = await api(server.url, '/v1/console/start', { method: 'POST', body: { scenario: 'meeting-only', agent: 'oracle' } });
  const base = `/v1/console/runs/${encodeURIComponent(id)}`;
  await until(async () => (await api(server.url, base)).state === 'finished', { what: 'the run to finish' });
  const res = await fetch(`${server.url}${base}/world?answers=1`);
  assert.equal(res.status, 403);
  await page.goto(`${server.url}/#/run/${encodeURIComponent(id)}`);
  await page.locator(tid('task-list')).waitFor({ timeout: 20_000 });
  assert.equal(await page.locator(tid('answers-toggle')).isVisible(), false);
  const text = await page.evaluate(() => document.body.textContent);
  const descriptions = scenarioDescriptions(join(ROOT, 'content/scenarios/meeting-only.ron')).filter((d) => d.length > 8);
  for (const d of descriptions) assert.ok(!text.includes(d), `hidden text shown: ${d}`);
});
