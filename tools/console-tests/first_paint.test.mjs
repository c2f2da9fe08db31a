// The first paint (issue 40, speed): the page's first requests (the console's mode,
// then what the address shows) start from a script the page carries inline (no
// round trip for early.js first), under a
// Content-Security-Policy that lets exactly that script run; and the runs list's
// first frame with rows lays out a screenful of them, not more (the rest come out
// of `hidden` in the frames after it).

import assert from 'node:assert/strict';
import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { launch, oracleRun, startView, tempDir, tid, until } from './lib.mjs';

let tmp;
let browser;
let oracleDir;
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

/**
 * Watches, from the page's start: requests for early.js, Content-Security-Policy
 * violations, and (ResizeObserver, whose callbacks come after a frame's layout and
 * before its paint) how many of the runs list's rows were laid out in the first
 * frame that laid out any.
 */
function watch() {
  window.__csp = [];
  document.addEventListener('securitypolicyviolation', (e) => window.__csp.push(`${e.violatedDirective} ${e.blockedURI}`));
  window.__firstLayout = null;
  const seen = new WeakSet();
  const mo = new MutationObserver(() => {
    const body = document.querySelector('[data-testid="runs-body"]');
    if (!body || seen.has(body)) return;
    seen.add(body);
    const ro = new ResizeObserver(() => {
      const rows = body.querySelectorAll(':scope > tr.run');
      if (!rows.length || window.__firstLayout) return;
      window.__firstLayout = {
        rows: rows.length,
        laidOut: body.querySelectorAll(':scope > tr.run:not([hidden])').length,
      };
      ro.disconnect();
    });
    ro.observe(body);
  });
  mo.observe(document, { childList: true, subtree: true });
}

test('1,000 runs: the summaries are asked by the inline script, and the first frame with rows lays out a screenful', async () => {
  const result = JSON.parse(readFileSync(join(oracleDir, 'result.json'), 'utf8'));
  const big = join(tmp, 'big');
  for (let i = 0; i < 1000; i++) {
    const d = join(big, `b-${Math.floor(i / 100)}`, 'meeting-only', `trial-${i % 100}`);
    mkdirSync(d, { recursive: true });
    for (const f of ['trajectory.jsonl', 'scenario.ron', 'run.json']) linkSync(join(oracleDir, f), join(d, f));
    writeFileSync(join(d, 'result.json'), JSON.stringify({ ...result, trial: i % 100 }));
  }
  const server = await startView([big], join(tmp, 'forks-big'), [], { timeoutMs: 60_000 });
  servers.push(server);
  const page = await browser.context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const asked = [];
  page.on('request', (r) => asked.push(new URL(r.url()).pathname));
  await page.addInitScript(watch);
  const res = await page.goto(`${server.url}/#/`);
  await page.locator(`${tid('runs-status')}[data-total="1000"]`).waitFor({ timeout: 30_000 });
  await until(async () => page.evaluate(() => window.__firstLayout !== null), { what: 'the first layout with rows' });
  const first = await page.evaluate(() => window.__firstLayout);
  assert.equal(first.rows, 1000, 'every run has its row in the first frame with rows');
  assert.ok(first.laidOut >= 20 && first.laidOut <= 60, `a screenful laid out in that frame, not more: ${first.laidOut}`);
  // The rest come out of `hidden` in the frames after it, each drawn whole.
  await until(async () => page.evaluate(() => document.querySelectorAll('[data-testid="runs-body"] > tr[hidden]').length === 0), { what: 'every row shown' });
  assert.equal(await page.locator(`${tid('runs-body')} > tr.run > td[data-label="Score"]`).count(), 1000);
  // The page names the one inline script it runs by its hash, and nothing inline else.
  const csp = res.headers()['content-security-policy'];
  assert.match(csp, /script-src 'self' 'sha256-[A-Za-z0-9+/]+=*';/);
  assert.doesNotMatch(csp, /unsafe-inline/);
  // The summaries were asked by the page's inline script (app.js took its answer):
  // no request for a script of its own first, none asked twice.
  assert.ok(!asked.includes('/assets/early.js'), `no request for early.js: ${asked.join(' ')}`);
  assert.deepEqual(await page.evaluate(() => [...window.tbsimEarly.keys()]), ['/v1/console/info', '/v1/console/runs']);
  for (const p of ['/v1/console/info', '/v1/console/runs']) assert.equal(asked.filter((a) => a === p).length, 1, `${p} asked once: ${asked.join(' ')}`);
  assert.deepEqual(await page.evaluate(() => window.__csp), [], 'no script or style refused');
  assert.deepEqual(errors, []);
  await page.close();
});

test("a run's address: its detail, first timeline page, world and tools are asked by the inline script", async () => {
  const server = await startView([oracleDir], join(tmp, 'forks-one'));
  servers.push(server);
  const page = await browser.context.newPage();
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const asked = [];
  page.on('request', (r) => { const u = new URL(r.url()); asked.push(u.pathname + u.search); });
  await page.addInitScript(watch);
  await page.goto(`${server.url}/#/run/oracle/step/2`);
  await page.locator(`${tid('world-note')}[data-step="2"]`).waitFor({ timeout: 30_000 });
  await page.locator(`${tid('timeline')} > li`).first().waitFor();
  const early = await page.evaluate(() => [...window.tbsimEarly.keys()]);
  assert.deepEqual(early, ['/v1/console/info', '/v1/console/runs/oracle', '/v1/console/runs/oracle/timeline?from=0&limit=40', '/v1/console/runs/oracle/world?step=2', '/v1/tools']);
  assert.ok(!asked.some((p) => p.startsWith('/assets/early.js')), asked.join(' '));
  // Each asked once: app.js took the early answers.
  for (const p of early) assert.equal(asked.filter((a) => a === p).length, 1, `${p} asked once: ${asked.join(' ')}`);
  assert.deepEqual(await page.evaluate(() => window.__csp), []);
  assert.deepEqual(errors, []);
  await page.close();
});
