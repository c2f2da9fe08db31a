// A long run (long-run.sh: every tool free, an adversary deciding until its step
// limit): the timeline comes in pages (the first small, for the first paint), yet
// every entry ends up drawn in order; a step's address, the scrubber and a click on
// an entry still find their step, wherever its page is.

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { ROOT, api, jsonLines, launch, startView, tbsimBin, tempDir, tid, until } from './lib.mjs';

/** Decisions of the long run: enough lines for several pages of the timeline. */
const STEPS = 300;

let tmp;
let longDir;
let browser;
const servers = [];

before(async () => {
  tmp = tempDir();
  longDir = join(tmp, 'long');
  const r = spawnSync(join(ROOT, 'tools/console-tests/long-run.sh'), [longDir, String(STEPS)], {
    cwd: ROOT, encoding: 'utf8', timeout: 600_000, env: { ...process.env, TBSIM_BIN: tbsimBin() },
  });
  if (r.status !== 0) throw new Error(`long-run.sh failed (${r.status}):\n${r.stderr}${r.error || ''}`);
  browser = await launch({ width: 1280, height: 700 });
});

after(async () => {
  if (browser) await browser.close();
  for (const s of servers) await s.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** Whether the step's decision entry is inside the timeline box's visible part. */
async function inView(page, step) {
  return page.evaluate((n) => {
    const li = document.querySelector(`[data-testid="timeline"] > li[data-type="decision"][data-step="${n}"]`);
    const box = li && li.closest('.timeline-box');
    if (!li || !box) return false;
    const a = li.getBoundingClientRect();
    const b = box.getBoundingClientRect();
    return a.top >= b.top - 1 && a.top < b.bottom;
  }, step);
}

test('a long timeline is paged, drawn whole and in order, and jumps to any step', async () => {
  const server = await startView([longDir], join(tmp, 'forks'));
  servers.push(server);
  const { page, errors } = browser;
  const { runs } = await api(server.url, '/v1/console/runs');
  const id = runs[0].id;
  const enc = encodeURIComponent(id);
  const { steps } = await api(server.url, `/v1/console/runs/${enc}`);
  assert.equal(steps, STEPS, 'the run went on to its step limit');
  const lines = jsonLines(join(longDir, 'trajectory.jsonl')).length;
  const whole = await api(server.url, `/v1/console/runs/${enc}/timeline?from=0`);
  assert.equal(whole.total, lines);

  // A page: at most `limit` lines, and where the next one starts.
  const first = await api(server.url, `/v1/console/runs/${enc}/timeline?from=0&limit=50`);
  assert.ok(first.lines.length <= 50 && first.next === 50 && first.total === lines, JSON.stringify({ n: first.lines.length, next: first.next }));

  const asked = [];
  page.on('request', (r) => { if (r.url().includes('/timeline?')) asked.push(new URL(r.url()).search); });
  const late = steps - 4;
  await page.goto(`${server.url}/#/run/${enc}/step/${late}`);
  await page.locator(`${tid('world-note')}[data-step="${late}"]`).waitFor({ timeout: 60_000 });
  // Every entry arrives (a page a frame), in line order, each once.
  await until(async () => Number(await page.locator(tid('timeline-count')).getAttribute('data-count')) === whole.lines.length,
    { timeoutMs: 120_000, what: `all ${whole.lines.length} entries drawn` });
  const order = await page.evaluate(() => [...document.querySelectorAll('[data-testid="timeline"] > li')].map((li) => Number(li.dataset.i)));
  assert.deepEqual(order, whole.lines.map((l) => l.i));
  assert.match(asked[0], /from=0&limit=\d+/, 'the first paint asks for one page');
  assert.ok(asked.length > 2, `pages asked: ${asked.join(' ')}`);

  // The step in the address is scrolled to, though its page came last.
  await until(() => inView(page, late), { timeoutMs: 30_000, what: `step ${late} scrolled into the timeline` });
  assert.equal(await page.locator(`${tid('timeline')} > li.current`).getAttribute('data-step'), String(late));

  // The scrubber jumps back to the start, and the world follows.
  await page.locator(tid('scrub-range')).fill('3');
  await until(() => inView(page, 3), { what: 'step 3 in view' });
  await page.locator(`${tid('world-note')}[data-step="3"]`).waitFor({ timeout: 30_000 });

  // Clicking an entry in the middle moves the scrubber there.
  const mid = Math.floor(steps / 2);
  await page.locator(tid('scrub-range')).fill(String(mid));
  await until(() => inView(page, mid), { what: `step ${mid} in view` });
  await page.locator(`${tid('timeline')} > li[data-type="decision"][data-step="${mid + 1}"] .idx`).click();
  await until(async () => (await page.locator(tid('scrub-label')).getAttribute('data-step')) === String(mid + 1), { what: `the scrubber at ${mid + 1}` });
  await page.locator(`${tid('world-note')}[data-step="${mid + 1}"]`).waitFor({ timeout: 30_000 });
  assert.deepEqual(errors, []);
});
