// Compare: runs picked in the list open side by side at a shareable address, with
// the first step where the agents' decisions diverge marked; two batches show the
// paired comparison `tbsim report --compare` computes, intervals included.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { api, jsonLines, launch, startView, tbsimSync, tempDir, tid, until } from './lib.mjs';

let tmp;
let browser;
const servers = [];

/** A batch of `agent` on busy-day and meeting-only into `out`. */
function batch(agent, out) {
  const r = tbsimSync(['run', 'content/scenarios/busy-day.ron', 'content/scenarios/meeting-only.ron', '--agent', agent, '--out', out]);
  if (r.status !== 0) throw new Error(`tbsim run --agent ${agent} failed:\n${r.stderr}`);
  return out;
}

/** The first step at which two runs' tool calls differ, read from their trajectories. */
function firstDifference(a, b) {
  const calls = (dir) => jsonLines(join(dir, 'trajectory.jsonl')).filter((l) => l.type === 'decision')
    .map((l) => JSON.stringify(l.calls.map((c) => [c.name, JSON.parse(c.arguments)])));
  const x = calls(a);
  const y = calls(b);
  const n = Math.min(x.length, y.length);
  for (let i = 0; i < n; i++) if (x[i] !== y[i]) return i + 1;
  return x.length === y.length ? null : n + 1;
}

before(async () => {
  tmp = tempDir();
  batch('oracle', join(tmp, 'oracle'));
  batch('adversary:read-everything', join(tmp, 'explore'));
  // A fork of the oracle's run at step 8 taken over by another agent: the same
  // first 8 decisions, then its own.
  const f = tbsimSync(['fork', join(tmp, 'oracle', 'busy-day'), '--at-step', '8', '--agent', 'adversary:read-everything', '--out', join(tmp, 'forked', 'busy-day')]);
  if (f.status !== 0) throw new Error(`tbsim fork failed:\n${f.stderr}`);
  browser = await launch({ width: 1280, height: 800 });
});

after(async () => {
  if (browser) await browser.close();
  for (const s of servers) await s.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test('two runs picked in the list compare side by side, the first divergence marked', async () => {
  const server = await startView([join(tmp, 'oracle'), join(tmp, 'forked')], join(tmp, 'forks'));
  servers.push(server);
  const { page, errors } = browser;
  const expected = firstDifference(join(tmp, 'oracle', 'busy-day'), join(tmp, 'forked', 'busy-day'));
  assert.ok(expected > 8, `the fork decides as its parent up to step 8 (diverges at ${expected})`);
  await page.goto(`${server.url}/#/`);
  await page.locator(tid('compare-select-oracle:busy-day')).check();
  assert.equal(await page.locator(tid('compare-selected')).getAttribute('aria-disabled'), 'true', 'one run is not a comparison');
  await page.locator(tid('compare-select-forked:busy-day')).check();
  await page.locator(tid('compare-selected')).click();
  await until(() => /#\/compare\/runs\//.test(page.url()), { what: 'the compare address' });
  const note = page.locator(tid('divergence'));
  await note.waitFor();
  assert.equal(Number(await note.getAttribute('data-step')), expected);
  const row = page.locator(tid('divergence-row'));
  assert.equal(await row.count(), 1, 'one step is marked as the first divergence');
  assert.equal(Number(await row.getAttribute('data-step')), expected);
  // Every step before it is the same in both; the marked one differs.
  const before = await page.locator(`${tid('compare-step')}[data-differs="true"]`).evaluateAll((els) => els.map((e) => Number(e.dataset.step)));
  assert.ok(before.every((s) => s > expected), `no differing step before ${expected}: ${before}`);
  // The marked row is scrolled into its box's view.
  await until(() => row.evaluate((el) => {
    const box = el.closest('.timeline-box').getBoundingClientRect();
    const r = el.getBoundingClientRect();
    return r.top >= box.top - 1 && r.bottom <= box.bottom + 1;
  }), { what: 'the divergence row in view' });
  // Checkpoints that differ are flagged; scores per run shown.
  assert.ok(await page.locator(`${tid('compare-checkpoint')}[data-differs="true"]`).count() > 0);
  assert.equal(await page.locator(tid('compare-score')).count(), 2);
  // The address is shareable: opened fresh, it shows the same comparison.
  const url = page.url();
  await page.goto(`${server.url}/#/`);
  await page.goto(url);
  await page.locator(tid('divergence-row')).waitFor();
  // A step link opens that run at that step.
  await page.locator(`${tid('divergence-row')} a`).nth(1).click();
  await until(() => page.url().includes(`/step/${expected}`), { what: 'the run at the divergence step' });
  await page.locator(tid('scrub-label')).waitFor();
  await until(async () => (await page.locator(tid('scrub-label')).getAttribute('data-step')) === String(expected), { what: 'the scrubber at the step' });
  assert.deepEqual(errors, []);
});

test('two batches show the paired comparison with its intervals, from the server', async () => {
  const server = await startView([join(tmp, 'oracle'), join(tmp, 'explore')], join(tmp, 'forks2'));
  servers.push(server);
  const { page, errors } = browser;
  const served = await api(server.url, '/v1/console/compare?batches=oracle,explore');
  await page.goto(`${server.url}/#/`);
  await page.locator(tid('compare-batch-a')).selectOption('oracle');
  await page.locator(tid('compare-batch-b')).selectOption('explore');
  await page.locator(tid('compare-batches')).click();
  await page.locator(tid('compare-contrasts')).waitFor();
  const k = served.comparison.contrasts[0];
  const ci = await page.locator(tid('contrast-ci')).first().textContent();
  assert.equal(ci, `[${k.score.ci_low.toFixed(3)}, ${k.score.ci_high.toFixed(3)}]`);
  assert.equal(await page.locator(tid('contrast-diff')).first().textContent(), k.score.diff.toFixed(3));
  assert.equal(k.pairs, 2);
  assert.deepEqual(errors, []);
});
