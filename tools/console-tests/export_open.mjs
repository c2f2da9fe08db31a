// Times opening a static export from disk (measured, not asserted), for issue 40's
// "an export ... opening in ≤ 2 s": for each of K loads of `index.html#/run/ID`
// (a fresh page each), the page's own clock (`performance.now()`, from the
// navigation's start) when the first timeline rows are drawn and when the world of
// the run's last step is drawn, then when the whole timeline is in (its end row);
// the JS heap after it. No server: the export's files only.
//
//   node tools/console-tests/export_open.mjs [--loads K] [--run ID] EXPORT_DIR
//
// Prints one JSON object.

import { readFileSync, statSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

import { launch, tid } from './lib.mjs';

const args = process.argv.slice(2);
let loads = 3;
let run = null;
let dir = null;
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--loads') loads = Number(args[++i]);
  else if (args[i] === '--run') run = args[++i];
  else dir = args[i];
}
if (!dir) throw new Error('give an export directory');
const index = readFileSync(join(dir, 'data', 'index.js'), 'utf8');
const idx = JSON.parse(index.slice(index.indexOf('(') + 1, index.lastIndexOf(')')));
run = run || Object.keys(idx.details)[0];
const bytes = readdirSync(join(dir, 'data')).reduce((t, f) => t + statSync(join(dir, 'data', f)).size, 0);
const out = { export: dir, run, data_bytes: bytes, loads: [] };
const browser = await launch();
const settle = `(sel) => new Promise((ok) => {
  const look = () => (document.querySelector(sel) ? requestAnimationFrame(() => ok(performance.now())) : requestAnimationFrame(look));
  look();
})`;
try {
  const url = `${pathToFileURL(join(dir, 'index.html')).href}#/run/${encodeURIComponent(run)}`;
  for (let k = 0; k < loads; k++) {
    const page = await browser.context.newPage();
    await page.goto(url);
    const rows = await page.evaluate(`(${settle})('[data-testid="timeline"] > li')`);
    const world = await page.evaluate(`(${settle})('[data-testid="world-note"][data-step]')`);
    const whole = await page.evaluate(`(${settle})('[data-testid="timeline"] > li[data-type="end"]')`);
    const heap = await page.evaluate(() => (performance.memory ? performance.memory.usedJSHeapSize : null));
    out.loads.push({ first_rows_ms: Math.round(rows), world_ms: Math.round(world), whole_timeline_ms: Math.round(whole), heap_bytes: heap });
    await page.close();
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(out, null, 1));
