// `tbsim serve`: a run started from the page updates live as it is stepped, and
// guidance sent from the page reaches the trajectory and result.json.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { api, jsonLines, launch, readJson, runDir, runIdOf, startServe, tempDir, tid, until } from './lib.mjs';

let out;
let server;
let browser;

before(async () => {
  out = tempDir();
  server = await startServe(out);
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  if (server) await server.stop();
  if (out) rmSync(out, { recursive: true, force: true });
});

const text = (page, id) => page.locator(tid(id)).first().textContent();
const stepsShown = async (page) => Number(await page.locator(tid('run-steps')).getAttribute('data-steps'));
const stateShown = (page) => page.locator(tid('run-state')).getAttribute('data-state');
const timelineCount = async (page) => page.locator(`${tid('timeline')} > li`).count();

/** Fills the start form on the runs list and submits it; returns the new run's id. */
async function startFromPage(page, { scenario, agent, hints = '0', paused = true }) {
  await page.goto(`${server.url}/#/`);
  await page.locator(tid('start-form')).waitFor();
  await page.selectOption(tid('start-scenario'), scenario);
  await page.selectOption(tid('start-agent'), agent);
  await page.selectOption(tid('start-hints'), hints);
  if (paused) await page.check(tid('start-paused'));
  await page.click(tid('start-submit'));
  const id = await until(() => runIdOf(page), { what: 'the run view' });
  await page.locator(tid('run-state')).waitFor();
  return id;
}

test('a live run updates in the page as it is stepped, then finishes with its score', async () => {
  const { page, errors } = browser;
  const id = await startFromPage(page, { scenario: 'busy-day', agent: 'oracle' });
  await until(async () => (await stateShown(page)) === 'paused', { what: 'the paused state' });
  const steps0 = await stepsShown(page);
  const lines0 = await timelineCount(page);
  for (let k = 1; k <= 3; k++) {
    await page.click(tid('btn-step'));
    await until(async () => (await stepsShown(page)) >= steps0 + k, { what: `step ${steps0 + k} in the page` });
    await until(async () => (await stateShown(page)) === 'paused', { what: 'paused again after a step' });
  }
  assert.equal(await stepsShown(page), steps0 + 3, 'three steps, one per press');
  await until(async () => (await page.locator(`${tid('timeline')} > li[data-type="decision"]`).count()) >= 3, { what: 'three decisions on the timeline' });
  assert.ok((await timelineCount(page)) > lines0 + 3, 'the timeline grew');
  assert.equal(await stateShown(page), 'paused');
  // The runs list (live over its stream) shows the run as paused too.
  const runs = await api(server.url, '/v1/console/runs');
  assert.equal(runs.runs.find((r) => r.id === id).state, 'paused');

  await page.click(tid('btn-resume'));
  await until(async () => (await stateShown(page)) === 'finished', { timeoutMs: 60_000, what: 'the run to finish' });
  const score = await page.locator(tid('run-score')).getAttribute('data-score');
  const detail = await api(server.url, `/v1/console/runs/${encodeURIComponent(id)}`);
  assert.ok(Number(score) > 0, `a score is shown (${score})`);
  assert.equal(Number(score), detail.score, 'the score shown is the API’s');
  assert.match(await text(page, 'run-score'), /^\d\.\d\d$/);
  await until(async () => (await page.locator(`${tid('timeline')} > li[data-type="end"]`).count()) === 1, { what: 'the end line' });
  const all = await api(server.url, `/v1/console/runs/${encodeURIComponent(id)}/timeline?from=0`);
  assert.ok(all.finished);
  await until(async () => (await timelineCount(page)) === all.lines.length, { what: `every trajectory line (${all.lines.length}) on the timeline` });
  // The list page shows it finished.
  await page.goto(`${server.url}/#/`);
  await until(async () => (await page.locator(`${tid(`run-row-${id}`)} ${tid('run-row-state')}`).getAttribute('data-state')) === 'finished', { what: 'the list to show it finished' });
  assert.deepEqual(errors, [], 'no script errors');
});

test('a hint and a message sent from the page reach the trajectory and result.json', async () => {
  const { page, errors } = browser;
  const id = await startFromPage(page, { scenario: 'meeting-only', agent: 'oracle' });
  await until(async () => (await stateShown(page)) === 'paused', { what: 'the paused state' });
  // The task is released at the start: after one step its hint button shows.
  await page.click(tid('btn-step'));
  const task = 'task/standup';
  await page.locator(tid(`hint-${task}`)).waitFor({ timeout: 20_000 });
  assert.match(await text(page, `hint-count-${task}`), /^0\/\d+ given/);
  await page.fill(tid('guide-from'), 'ana');
  await page.click(tid(`hint-${task}`));
  await until(async () => /tier 1/.test(await text(page, 'guide-status')), { what: 'the hint to be queued' });
  await page.selectOption(tid('guide-task'), task);
  await page.fill(tid('guide-text'), 'Write down the budget cap you hear.');
  await page.click(tid('guide-send'));
  await until(async () => /queued/i.test(await text(page, 'guide-status')), { what: 'the message to be queued' });
  await until(async () => /^1\/\d+ given/.test(await text(page, `hint-count-${task}`)), { what: 'the hint count to show 1 given' });
  // The name is remembered.
  assert.equal(await page.evaluate(() => localStorage.getItem('tbsim.console.name')), 'ana');

  await page.click(tid('btn-resume'));
  await until(async () => (await stateShown(page)) === 'finished', { timeoutMs: 60_000, what: 'the run to finish' });
  // The guidance lines are on the page's timeline.
  await until(async () => (await page.locator(`${tid('timeline')} > li[data-type="guidance"]`).count()) === 2, { what: 'two guidance lines on the timeline' });

  const detail = await api(server.url, `/v1/console/runs/${encodeURIComponent(id)}`);
  const dir = runDir(out, detail);
  const lines = jsonLines(join(dir, 'trajectory.jsonl'));
  const guidance = lines.filter((l) => l.type === 'guidance');
  assert.equal(guidance.length, 2, JSON.stringify(guidance));
  const hint = guidance.find((g) => g.tier !== null && g.tier !== undefined);
  const msg = guidance.find((g) => g.tier === null || g.tier === undefined);
  assert.ok(hint && msg, 'a hint and a message');
  assert.equal(hint.tier, 1);
  assert.equal(hint.task, task);
  assert.equal(hint.by, 'human:ana');
  assert.equal(msg.by, 'human:ana');
  assert.equal(msg.task, task);
  assert.equal(msg.text, 'Write down the budget cap you hear.');

  const result = readJson(join(dir, 'result.json'));
  const t = result.tasks.find((x) => x.key === task);
  assert.deepEqual({ hints: t.guidance.hints, messages: t.guidance.messages, top_tier: t.guidance.top_tier }, { hints: 1, messages: 1, top_tier: 1 });
  assert.equal(result.guidance.hints, 1);
  assert.equal(result.guidance.messages, 1);
  assert.deepEqual(errors, [], 'no script errors');
});

test('"Resume all" on the runs list lets every held run go', async () => {
  const { page, errors } = browser;
  const ids = [];
  for (const scenario of ['meeting-only', 'two-days']) {
    const r = await api(server.url, '/v1/console/start', { method: 'POST', body: { scenario, agent: 'oracle', paused: true } });
    ids.push(r.id);
  }
  await page.goto(`${server.url}/#/`);
  for (const id of ids) {
    await until(async () => (await page.locator(`${tid(`run-row-${id}`)} ${tid('run-row-state')}`).getAttribute('data-state')) === 'paused', { what: `${id} listed as paused` });
  }
  await page.click(tid('resume-all'));
  await until(async () => /^Resumed [1-9]\d* run/.test(await text(page, 'hold-status')), { what: 'the resume-all answer' });
  for (const id of ids) {
    await until(async () => (await page.locator(`${tid(`run-row-${id}`)} ${tid('run-row-state')}`).getAttribute('data-state')) === 'finished', { timeoutMs: 60_000, what: `${id} to finish` });
  }
  assert.deepEqual(errors, [], 'no script errors');
});
