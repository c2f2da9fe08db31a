// Timings of the console in headless Chromium, for runs/bench (measured, not
// asserted): the first runs-list request after `tbsim view` starts over N
// synthetic recorded runs, the page listing them, until every summary is read,
// and for each run directory given: its routes timed one by one on a fresh server
// (detail, timeline, world at the end and while scrubbing), then the first paint
// (timeline and world drawn) on another fresh server, three loads.
//
//   TBSIM_BIN=… node tools/console-tests/measure.mjs [--runs N] [--view-arg ARG]… [--prime] [--no-routes] RUN_DIR…
//
// Prints one JSON object. N synthetic runs are hard links of the first RUN_DIR's
// files with their own result.json. `--view-arg` passes ARG to every `tbsim view`
// (`--view-arg --cache --view-arg DIR`, `--view-arg --no-cache`); `--prime` opens
// each run once on a server of its own before the first paints are timed, so a
// view cache given that way holds its end (the first paint is then a console
// process's first look at a run it has an entry for); `--no-routes` skips the
// routes timed one by one (which would prime a cache too); `--warm-browser` loads
// the console once (a throwaway server of the last RUN_DIR, `--no-cache`) before
// anything is timed, so the first paints do not carry Chromium's own first start
// (renderer, fonts; 150-250 ms at load 5, runs/bench/2026-11-27/console-speed-5.md).

import { linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { launch, startView, tempDir, tid, until } from './lib.mjs';

const args = process.argv.slice(2);
let n = 1000;
const dirs = [];
const viewArgs = [];
let prime = false;
let routes = true;
let warmBrowser = false;
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--runs') n = Number(args[++i]);
  else if (args[i] === '--view-arg') viewArgs.push(args[++i]);
  else if (args[i] === '--prime') prime = true;
  else if (args[i] === '--no-routes') routes = false;
  else if (args[i] === '--warm-browser') warmBrowser = true;
  else dirs.push(args[i]);
}
if (!dirs.length) throw new Error('give at least one run directory');

const tmp = tempDir('tbsim-measure-');
const out = { runs: n, list: {}, paint: {} };
const browser = await launch();
try {
  const { page } = browser;
  if (warmBrowser) {
    const w = await startView([dirs[dirs.length - 1]], join(tmp, 'forks'), ['--no-cache']);
    const wid = (await (await fetch(`${w.url}/v1/console/runs`)).json()).runs[0].id;
    await page.goto(`${w.url}/#/run/${encodeURIComponent(wid)}`);
    await until(async () => (await page.locator(tid('world-note')).count()) > 0, { timeoutMs: 120_000, what: 'the warm-up page' });
    await page.goto('about:blank');
    await w.stop();
  }
  // --runs 0: first paints only.
  if (n > 0) {
  const big = join(tmp, 'big');
  const result = JSON.parse(readFileSync(join(dirs[0], 'result.json'), 'utf8'));
  for (let i = 0; i < n; i++) {
    const d = join(big, `batch-${Math.floor(i / 100)}`, result.scenario, `trial-${i % 100}`);
    mkdirSync(d, { recursive: true });
    for (const f of ['trajectory.jsonl', 'scenario.ron', 'run.json']) linkSync(join(dirs[0], f), join(d, f));
    writeFileSync(join(d, 'result.json'), JSON.stringify({ ...result, trial: i % 100, checkpoint_score: (i % 101) / 100 }));
  }
  const t0 = performance.now();
  const server = await startView([big], join(tmp, 'forks'), viewArgs, { timeoutMs: 300_000 });
  const t1 = performance.now();
  // The old console replayed every run for its first list: give up after 10 minutes.
  const res = await fetch(`${server.url}/v1/console/runs`, { signal: AbortSignal.timeout(600_000) });
  const body = await res.json();
  const t2 = performance.now();
  if (body.runs.length !== n) throw new Error(`listed ${body.runs.length} of ${n}`);
  out.list.view_start_ms = Math.round(t1 - t0);
  out.list.first_request_ms = Math.round(t2 - t1);
  const again = performance.now();
  await (await fetch(`${server.url}/v1/console/runs`)).json();
  out.list.second_request_ms = Math.round(performance.now() - again);
  out.list.first_indexing_rows = body.runs.filter((r) => r.indexing).length;
  // Until a list has every summary read (the background index done).
  for (;;) {
    const l = await (await fetch(`${server.url}/v1/console/runs`)).json();
    if (!l.runs.some((r) => r.indexing)) break;
    await new Promise((r) => setTimeout(r, 50));
  }
  out.list.all_read_ms = Math.round(performance.now() - t1);
  await page.goto(`${server.url}/#/`);
  await until(async () => (await page.locator(tid('runs-status')).getAttribute('data-total')) === String(n)
    || (await page.locator(`${tid('runs-body')} > tr`).count()) >= Math.min(n, 50), { timeoutMs: 120_000, what: 'the list' });
  out.list.page_listed_ms = Math.round(await page.evaluate(() => performance.now()));
  await server.stop();
  }

  const timed = async (url) => {
    const t = performance.now();
    const res = await fetch(url);
    const body = await res.text();
    if (!res.ok) throw new Error(`${url}: ${res.status} ${body}`);
    return { ms: Math.round(performance.now() - t), bytes: body.length, body };
  };
  for (const dir of dirs) {
    const name = dir.split('/').filter(Boolean).pop();
    // The routes one by one, each cold first (a fresh server).
    if (routes) {
      const s = await startView([dir], join(tmp, 'forks'), viewArgs);
      const id = (await (await fetch(`${s.url}/v1/console/runs`)).json()).runs[0].id;
      const base = `${s.url}/v1/console/runs/${encodeURIComponent(id)}`;
      const r = {};
      const d = await timed(base);
      const steps = JSON.parse(d.body).steps;
      r.detail_first_ms = d.ms;
      r.detail_again_ms = (await timed(base)).ms;
      const page = await timed(`${base}/timeline?from=0&limit=40`);
      r.timeline_first_page = { ms: page.ms, bytes: page.bytes };
      const whole = await timed(`${base}/timeline?from=0`);
      r.timeline_whole = { ms: whole.ms, bytes: whole.bytes };
      r.world_last_ms = (await timed(`${base}/world`)).ms;
      r.world_last_again_ms = (await timed(`${base}/world`)).ms;
      const mid = Math.floor(steps / 2);
      r.world_mid_ms = (await timed(`${base}/world?step=${mid}`)).ms;
      const next = [];
      for (let k = 1; k <= 5; k++) next.push((await timed(`${base}/world?step=${mid + k}`)).ms);
      r.world_next_5_steps_ms = next;
      r.world_back_to_1_ms = (await timed(`${base}/world?step=1`)).ms;
      r.world_mid_again_ms = (await timed(`${base}/world?step=${mid}`)).ms;
      r.steps = steps;
      out.routes = out.routes || {};
      out.routes[name] = r;
      await s.stop();
    }
    if (prime) {
      const p = await startView([dir], join(tmp, 'forks'), viewArgs);
      const pid = (await (await fetch(`${p.url}/v1/console/runs`)).json()).runs[0].id;
      const pbase = `${p.url}/v1/console/runs/${encodeURIComponent(pid)}`;
      await (await fetch(pbase)).text();
      await (await fetch(`${pbase}/world`)).text();
      await p.stop();
    }
    const s = await startView([dir], join(tmp, 'forks'), viewArgs);
    const id = (await (await fetch(`${s.url}/v1/console/runs`)).json()).runs[0].id;
    const times = [];
    for (let k = 0; k < 3; k++) {
      await page.goto('about:blank');
      await page.goto(`${s.url}/#/run/${encodeURIComponent(id)}`);
      // Painted: timeline entries and the world both drawn (checked every frame,
      // in the page: the console's CSP allows no eval, so no waitForFunction).
      times.push(Math.round(await page.evaluate(() => new Promise((resolve) => {
        const check = () => {
          const c = document.querySelector('[data-testid="timeline-count"]');
          const w = document.querySelector('[data-testid="world-note"]');
          if (c && Number(c.dataset.count) > 0 && w && w.dataset.step !== undefined) resolve(performance.now());
          else requestAnimationFrame(check);
        };
        check();
      }))));
    }
    const lines = readFileSync(join(dir, 'trajectory.jsonl'), 'utf8').split('\n').filter(Boolean).length;
    out.paint[name] = { lines, first_paint_ms: times };
    await s.stop();
  }
} finally {
  await browser.close();
  rmSync(tmp, { recursive: true, force: true });
}
console.log(JSON.stringify(out, null, 2));
