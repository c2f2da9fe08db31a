// Before/after in one run, interleaved pairs (issue 40, sessions 26-27): two tbsim
// binaries, alternately first, each timed on
//   list   the runs list at 1,000 runs: 50+ rows in the page and a frame drawn;
//   long   the 2,000-decision run opened (#/run/<id>): first timeline rows / world;
//   steps  "Next" from the middle of that run, 10 steps: click to the step's world drawn;
//   drag   a 20-step drag (input events a frame apart) until the world shows its end;
//   bytes  the world route's bytes per "Next" step (decoded body).
// Times are the page's own clock. Usage (from the repository):
//   node runs/bench/2026-11-29-s27-console/ab.mjs BEFORE_BIN AFTER_BIN LONG_RUN_DIR BIG_DIR [PAIRS]
// BIG_DIR: 1,000 runs (hard links of LONG_RUN_DIR, as scrub.mjs makes them).

import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadavg } from 'node:os';

import { launch, startView, tempDir, until } from '../../../tools/console-tests/lib.mjs';

const [before, after, longDir, bigDir, pairsArg] = process.argv.slice(2);
const pairs = Number(pairsArg || 3);
const tmp = tempDir('tbsim-ab-');
const browser = await launch();
const total = JSON.parse(readFileSync(join(longDir, 'result.json'), 'utf8')).steps;
const mid = Math.floor(total / 2);

// Stamps, in the page, the first frame after `sel` matches (from navigation start).
const stamp = (marks) => {
  window.__marks = {};
  const look = () => {
    let left = false;
    for (const [name, sel, n] of marks) {
      if (window.__marks[name] !== undefined) continue;
      const found = document.querySelectorAll(sel).length >= n;
      if (found) requestAnimationFrame(() => { if (window.__marks[name] === undefined) window.__marks[name] = performance.now(); });
      left = true;
    }
    if (left) requestAnimationFrame(look);
  };
  requestAnimationFrame(look);
};

async function loadTimed(url, marks) {
  const page = await browser.context.newPage();
  await page.addInitScript(stamp, marks);
  await page.goto(url);
  await until(async () => page.evaluate((n) => Object.keys(window.__marks || {}).length === n, marks.length), { timeoutMs: 120_000, what: 'the marks' });
  const m = await page.evaluate(() => window.__marks);
  await page.close();
  return Object.fromEntries(Object.entries(m).map(([k, v]) => [k, Math.round(v)]));
}

async function list(bin) {
  process.env.TBSIM_BIN = bin;
  const s = await startView([bigDir], join(tmp, `f-${Math.random()}`), ['--no-cache'], { timeoutMs: 300_000 });
  for (;;) {
    const l = await (await fetch(`${s.url}/v1/console/runs`)).json();
    if (!l.runs.some((r) => r.indexing)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  const out = [];
  for (let k = 0; k < 3; k++) out.push((await loadTimed(`${s.url}/#/`, [['rows', '[data-testid="runs-body"] > tr.run', 50]])).rows);
  await s.stop();
  return out;
}

async function long(bin) {
  process.env.TBSIM_BIN = bin;
  const s = await startView([longDir], join(tmp, `f-${Math.random()}`), ['--no-cache']);
  const id = (await (await fetch(`${s.url}/v1/console/runs`)).json()).runs[0].id;
  const out = [];
  // The first load replays the run (no cache); the next ones find its worlds kept.
  for (let k = 0; k < 3; k++) {
    out.push(await loadTimed(`${s.url}/#/run/${encodeURIComponent(id)}`,
      [['rows', '[data-testid="timeline"] > li', 1], ['world', '[data-testid="world-note"][data-step]', 1]]));
  }
  // Scrubbing, in a page opened at the middle step.
  const page = await browser.context.newPage();
  await page.goto(`${s.url}/#/run/${encodeURIComponent(id)}/step/${mid}`);
  await page.locator(`[data-testid="world-note"][data-step="${mid}"]`).waitFor({ timeout: 120_000 });
  await until(async () => (await page.locator('[data-testid="scrub-range"]').getAttribute('max')) === String(total), { timeoutMs: 120_000, what: 'the run length' });
  await page.waitForTimeout(3000); // the timeline's later pages wait for a still scrubber: let them come
  const scrub = await page.evaluate(async ({ mid }) => {
    const settle = (cond) => new Promise((ok) => { const look = () => (cond() ? requestAnimationFrame(() => ok(performance.now())) : requestAnimationFrame(look)); look(); });
    const note = document.querySelector('[data-testid="world-note"]');
    const next = document.querySelector('[data-testid="scrub-next"]');
    const steps = [];
    for (let k = 1; k <= 10; k++) {
      const t0 = performance.now();
      next.click();
      steps.push(Math.round(await settle(() => note.dataset.step === String(mid + k)) - t0));
    }
    const bytes = performance.getEntriesByType('resource').filter((e) => /\/world\?step=/.test(e.name)).slice(-10).map((e) => e.decodedBodySize);
    const range = document.querySelector('[data-testid="scrub-range"]');
    const frame = () => new Promise((r) => requestAnimationFrame(r));
    const from = mid + 10;
    const to = from + 20;
    const t0 = performance.now();
    for (let s2 = from + 1; s2 <= to; s2++) {
      range.value = String(s2);
      range.dispatchEvent(new Event('input', { bubbles: true }));
      await frame();
    }
    const moved = performance.now();
    const t1 = await settle(() => note.dataset.step === String(to));
    return { steps, bytes, drag: Math.round(t1 - t0), settle: Math.round(t1 - moved) };
  }, { mid });
  await page.close();
  await s.stop();
  return { opens: out, ...scrub };
}

const rows = [];
for (let p = 0; p < pairs; p++) {
  const order = p % 2 === 0 ? [['before', before], ['after', after]] : [['after', after], ['before', before]];
  for (const [name, bin] of order) {
    const load = loadavg().map((x) => x.toFixed(2)).join(' ');
    const l = await list(bin);
    const g = await long(bin);
    const row = { pair: p, build: name, load, list_ms: l, long_open_ms: g.opens, next_ms: g.steps, world_bytes: g.bytes, drag_ms: g.drag, drag_settle_ms: g.settle };
    rows.push(row);
    console.log(JSON.stringify(row));
  }
}
await browser.close();
