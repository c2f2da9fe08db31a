// Play mode finishes a meeting task by the oracle's calls typed into the generated
// tool forms; a fork of a recorded run, made from the page, replays.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { after, before, test } from 'node:test';

import { api, jsonLines, launch, oracleRun, readJson, runDir, runIdOf, startServe, startView, tbsimSync, tempDir, tid, until } from './lib.mjs';

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

/** The oracle's tool calls, in order: [{name, arguments}]. */
function oracleCalls() {
  return jsonLines(join(oracleDir, 'trajectory.jsonl'))
    .filter((l) => l.type === 'decision')
    .flatMap((d) => d.calls.map((c) => ({ name: c.name, arguments: JSON.parse(c.arguments || '{}') })));
}

test('play mode: the oracle’s calls typed into the tool forms score 1', async () => {
  const out = join(tmp, 'serve');
  const server = await startServe(out);
  servers.push(server);
  const { page, errors } = browser;
  const calls = oracleCalls();
  assert.ok(calls.length >= 2, 'the oracle made calls');

  await page.goto(`${server.url}/#/play`);
  await page.fill(tid('play-name'), 'tester');
  await page.selectOption(tid('play-scenario'), 'meeting-only');
  await page.click(tid('play-submit'));
  const id = await until(() => runIdOf(page), { what: 'the run view' });
  await page.locator(tid('play-panel')).waitFor({ state: 'visible', timeout: 20_000 });
  await page.locator(`${tid('turn-view')}[data-step="0"]`).waitFor({ timeout: 20_000 });
  assert.match(await page.locator(tid('turn-view')).textContent(), /You are/, 'the briefing shows');

  const tools = await api(server.url, '/v1/tools');
  const byName = Object.fromEntries((Array.isArray(tools) ? tools : tools.tools).map((t) => [t.name, t]));
  for (const [n, call] of calls.entries()) {
    const stepBefore = Number(await page.locator(tid('turn-view')).getAttribute('data-step'));
    await page.selectOption(tid('play-tool'), call.name);
    const form = page.locator(tid(`tool-form-${call.name}`));
    await form.waitFor();
    const props = byName[call.name].parameters.properties || {};
    for (const [k, v] of Object.entries(call.arguments)) {
      assert.ok(props[k], `${call.name} has a field ${k}`);
      const input = form.locator(tid(`arg-${call.name}-${k}`));
      if (Array.isArray(props[k].enum)) await input.selectOption(JSON.stringify(v));
      else if (Array.isArray(v)) await input.fill(v.join('\n'));
      else await input.fill(String(v));
    }
    // Required fields are marked.
    for (const r of byName[call.name].parameters.required || []) {
      assert.equal(await form.locator(tid(`arg-${call.name}-${r}`)).getAttribute('aria-required'), 'true');
    }
    await form.locator(tid('tool-submit')).click();
    await until(async () => Number(await page.locator(tid('turn-view')).getAttribute('data-step')) === stepBefore + 1,
      { what: `the turn after call ${n + 1} (${call.name})` });
    const failed = await page.locator(`${tid('turn-result')}[data-ok="false"]`).count();
    assert.equal(failed, 0, `call ${n + 1} (${call.name}) failed: ${await page.locator(tid('turn-view')).textContent()}`);
  }
  await until(async () => (await page.locator(tid('run-state')).getAttribute('data-state')) === 'finished', { what: 'the run to finish' });
  await until(async () => Number(await page.locator(tid('run-score')).getAttribute('data-score')) === 1, { what: 'score 1 in the page' });
  assert.equal((await page.locator(tid('run-score')).textContent()).trim(), '1.00');

  const detail = await api(server.url, `/v1/console/runs/${encodeURIComponent(id)}`);
  assert.match(detail.agent, /^human:tester$/);
  const result = readJson(join(runDir(out, detail), 'result.json'));
  assert.equal(result.checkpoint_score, 1);
  assert.deepEqual(errors, [], 'no script errors');
});

test('play mode shows a tool’s structured error', async () => {
  const server = servers[0];
  const { page } = browser;
  await page.goto(`${server.url}/#/play`);
  await page.fill(tid('play-name'), 'tester');
  await page.selectOption(tid('play-scenario'), 'meeting-only');
  await page.click(tid('play-submit'));
  await page.locator(`${tid('turn-view')}[data-step="0"]`).waitFor({ timeout: 20_000 });
  await page.selectOption(tid('play-tool'), 'read_file');
  const form = page.locator(tid('tool-form-read_file'));
  await form.locator(tid('arg-read_file-path')).fill('drive/no/such/file.txt');
  await form.locator(tid('tool-submit')).click();
  const err = page.locator(tid('tool-error')).first();
  await err.waitFor({ timeout: 20_000 });
  assert.match(await err.textContent(), /not_found|path|invalid/);
  assert.match(await page.locator(tid('play-error')).textContent(), /failed/);
});

test('a fork made from the page at step 2 of a recorded run replays', async () => {
  const forks = join(tmp, 'forks');
  const server = await startView([oracleDir], forks);
  servers.push(server);
  const { page, errors } = browser;
  const runs = await api(server.url, '/v1/console/runs');
  assert.equal(runs.runs.length, 1);
  const parent = runs.runs[0];
  await page.goto(`${server.url}/#/`);
  await page.click(tid(`run-link-${parent.id}`));
  await page.locator(tid('scrub-range')).waitFor();
  await until(async () => Number(await page.locator(tid('scrub-label')).getAttribute('data-step')) === parent.step, { what: 'the scrubber at the last step' });
  // Back to step 2 with the keyboard (and the buttons).
  await page.locator('body').click({ position: { x: 1, y: 1 } });
  while (Number(await page.locator(tid('scrub-label')).getAttribute('data-step')) > 3) await page.keyboard.press('ArrowLeft');
  await page.click(tid('scrub-prev'));
  await until(async () => Number(await page.locator(tid('world-note')).getAttribute('data-step')) === 2, { what: 'the world after step 2' });
  assert.equal(Number(await page.locator(tid('scrub-label')).getAttribute('data-step')), 2);
  // The timeline past step 2 is dimmed.
  assert.ok(await page.locator(`${tid('timeline')} > li.future[data-type="decision"]`).count() >= 1, 'later decisions dimmed');
  await page.selectOption(tid('fork-agent'), 'oracle');
  await page.click(tid('fork-button'));
  const id = await until(() => {
    const r = runIdOf(page);
    return r && r !== parent.id ? r : null;
  }, { what: 'the fork’s run view' });
  await until(async () => (await page.locator(tid('run-state')).getAttribute('data-state')) === 'finished', { timeoutMs: 60_000, what: 'the fork to finish' });
  const detail = await api(server.url, `/v1/console/runs/${encodeURIComponent(id)}`);
  assert.equal(detail.fork.step, 2);
  const dir = runDir(forks, detail);
  const header = jsonLines(join(dir, 'trajectory.jsonl'))[0];
  assert.equal(header.type, 'header');
  assert.equal(header.fork.parent, basename(oracleDir));
  assert.equal(header.fork.step, 2);
  const r = tbsimSync(['replay', dir]);
  assert.equal(r.status, 0, `tbsim replay ${dir} failed:\n${r.stdout}\n${r.stderr}`);
  assert.deepEqual(errors, [], 'no script errors');
});
