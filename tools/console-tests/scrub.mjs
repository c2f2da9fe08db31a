// Scrubbing and first-paint timings taken inside the page (measured, not asserted),
// for issue 40's targets: a step with the "next" button (world drawn for that step),
// a 20-step drag of the scrubber (input events a frame apart, until the world shows
// the last step), and the runs list's first paint at N runs (rows in the page and a
// frame drawn). Times are the page's own clock (`performance.now()`), read in the
// page, so no round trip to the browser is counted.
//
//   TBSIM_BIN=… node tools/console-tests/scrub.mjs [--runs N] [--steps K] [--whole] RUN_DIR
//
// By default the steps start once the step's world is drawn and the scrubber has
// the run's length, while the timeline's later pages may still be coming (as a
// person would start); `--whole` waits for every timeline entry first.
//
// Prints one JSON object. The N runs are hard links of RUN_DIR's files, each with
// its own result.json (as measure.mjs makes them).

import { linkSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { launch, startView, tempDir, tid, until } from './lib.mjs';

const args = process.argv.slice(2);
let n = 1000;
let steps = 10;
let whole = false;
let dir = null;
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--runs') n = Number(args[++i]);
  else if (args[i] === '--steps') steps = Number(args[++i]);
  else if (args[i] === '--whole') whole = true;
  else dir = args[i];
}
if (!dir) throw new Error('give a run directory');

const tmp = tempDir('tbsim-scrub-');
const out = { run: dir, whole_timeline_first: whole, steps: {}, drag: {}, list: {} };
const browser = await launch();
const { page } = browser;

// Resolves, in the page, once `cond()` holds and a frame has been drawn after it.
const settle = `(cond) => new Promise((ok) => {
  const look = () => (cond() ? requestAnimationFrame(() => ok(performance.now())) : requestAnimationFrame(look));
  look();
})`;

try {
  const server = await startView([dir], join(tmp, 'forks'), ['--no-cache']);
  const id = (await (await fetch(`${server.url}/v1/console/runs`)).json()).runs[0].id;
  const total = JSON.parse(readFileSync(join(dir, 'result.json'), 'utf8')).steps;
  const mid = Math.floor(total / 2);
  await page.goto(`${server.url}/#/run/${encodeURIComponent(id)}/step/${mid}`);
  await page.locator(`${tid('world-note')}[data-step="${mid}"]`).waitFor({ timeout: 120_000 });
  await until(async () => (await page.locator(tid('scrub-range')).getAttribute('max')) === String(total), { what: 'the whole timeline', timeoutMs: 120_000 });
  if (whole) {
    // Every page drawn: the count of entries stays put for a second.
    let last = -1;
    await until(async () => {
      const n = Number(await page.locator(tid('timeline-count')).getAttribute('data-count'));
      const same = n === last;
      last = n;
      if (!same) await page.waitForTimeout(1000);
      return same;
    }, { what: 'every entry drawn', timeoutMs: 120_000 });
  }

  // Steps with "next": from the click to the world of that step drawn.
  const each = [];
  for (let k = 1; k <= steps; k++) {
    const target = mid + k;
    const ms = await page.evaluate(
      async ({ target, settle }) => {
        const wait = eval(settle);
        const note = document.querySelector('[data-testid="world-note"]');
        const next = document.querySelector('[data-testid="scrub-next"]');
        const t0 = performance.now();
        next.click();
        const t1 = await wait(() => note.dataset.step === String(target));
        return t1 - t0;
      },
      { target, settle },
    );
    each.push(Math.round(ms));
  }
  out.steps.next_button_ms = each;

  // A 20-step drag: input events a frame apart, then until the world shows the end.
  const from = mid + steps;
  const to = from + 20;
  const drag = await page.evaluate(
    async ({ from, to, settle }) => {
      const wait = eval(settle);
      const note = document.querySelector('[data-testid="world-note"]');
      const range = document.querySelector('[data-testid="scrub-range"]');
      const frame = () => new Promise((r) => requestAnimationFrame(r));
      const t0 = performance.now();
      for (let s = from + 1; s <= to; s++) {
        range.value = String(s);
        range.dispatchEvent(new Event('input', { bubbles: true }));
        await frame();
      }
      const moved = performance.now();
      const t1 = await wait(() => note.dataset.step === String(to));
      return { moving_ms: moved - t0, settled_after_last_ms: t1 - moved, total_ms: t1 - t0 };
    },
    { from, to, settle },
  );
  out.drag = Object.fromEntries(Object.entries(drag).map(([k, v]) => [k, Math.round(v)]));
  await server.stop();

  // The runs list at N runs: first paint with rows, stamped in the page.
  if (n > 0) {
    const big = join(tmp, 'big');
    const result = JSON.parse(readFileSync(join(dir, 'result.json'), 'utf8'));
    for (let i = 0; i < n; i++) {
      const d = join(big, `batch-${Math.floor(i / 100)}`, result.scenario, `trial-${i % 100}`);
      mkdirSync(d, { recursive: true });
      for (const f of ['trajectory.jsonl', 'scenario.ron', 'run.json']) linkSync(join(dir, f), join(d, f));
      writeFileSync(join(d, 'result.json'), JSON.stringify({ ...result, trial: i % 100, checkpoint_score: (i % 101) / 100 }));
    }
    const list = await startView([big], join(tmp, 'forks2'), ['--no-cache'], { timeoutMs: 300_000 });
    // Every summary read first, so the paint timed is the page's, not the index's.
    for (;;) {
      const l = await (await fetch(`${list.url}/v1/console/runs`)).json();
      if (!l.runs.some((r) => r.indexing)) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    const want = Math.min(n, 50);
    const loads = [];
    for (let k = 0; k < 3; k++) {
      await page.addInitScript(({ want }) => {
        window.__rowsPainted = null;
        const look = () => {
          const body = document.querySelector('[data-testid="runs-body"]');
          if (body && body.children.length >= want) {
            requestAnimationFrame(() => { window.__rowsPainted = { at: performance.now(), rows: body.children.length }; });
          } else requestAnimationFrame(look);
        };
        requestAnimationFrame(look);
      }, { want });
      await page.goto(`${list.url}/#/`);
      await until(async () => page.evaluate(() => window.__rowsPainted !== null), { timeoutMs: 120_000, what: 'the list painted' });
      loads.push(await page.evaluate(() => window.__rowsPainted));
      await page.goto('about:blank');
    }
    out.list = { runs: n, rows_wanted: want, painted_ms: loads.map((l) => Math.round(l.at)), rows_in_page: loads.map((l) => l.rows) };
    await list.stop();
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(out, null, 2));
