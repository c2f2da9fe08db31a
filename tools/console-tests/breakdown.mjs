// Where a run's first paint goes (measured, not asserted): for each run directory,
// a fresh `tbsim view` and three loads of the run's page; for each load, the
// navigation's milestones and every request's start and end (Resource Timing),
// then the paint (timeline and world drawn), all in ms from navigation start.
//
//   TBSIM_BIN=… node tools/console-tests/breakdown.mjs [--view-arg ARG]… RUN_DIR…

import { join } from 'node:path';

import { launch, startView, tempDir } from './lib.mjs';

const args = process.argv.slice(2);
const dirs = [];
const viewArgs = [];
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--view-arg') viewArgs.push(args[++i]);
  else dirs.push(args[i]);
}
const tmp = tempDir('tbsim-breakdown-');
const browser = await launch();
const out = {};
try {
  const { page } = browser;
  for (const dir of dirs) {
    const name = dir.split('/').filter(Boolean).pop();
    const s = await startView([dir], join(tmp, 'forks'), viewArgs);
    const id = (await (await fetch(`${s.url}/v1/console/runs`)).json()).runs[0].id;
    out[name] = [];
    for (let k = 0; k < 3; k++) {
      await page.goto('about:blank');
      await page.goto(`${s.url}/#/run/${encodeURIComponent(id)}`);
      out[name].push(await page.evaluate(() => new Promise((resolve) => {
        const check = () => {
          const c = document.querySelector('[data-testid="timeline-count"]');
          const w = document.querySelector('[data-testid="world-note"]');
          if (c && Number(c.dataset.count) > 0 && w && w.dataset.step !== undefined) {
            const paint = performance.now();
            const nav = performance.getEntriesByType('navigation')[0];
            const r = (x) => Math.round(x);
            resolve({
              paint: r(paint),
              dom_content_loaded: r(nav.domContentLoadedEventEnd),
              load: r(nav.loadEventEnd),
              requests: performance.getEntriesByType('resource').map((e) => ({
                url: e.name.replace(/^https?:\/\/[^/]+/, ''),
                start: r(e.startTime),
                end: r(e.responseEnd),
                kB: Math.round(e.decodedBodySize / 1024),
              })),
            });
          } else requestAnimationFrame(check);
        };
        check();
      })));
    }
    await s.stop();
  }
} finally {
  await browser.close();
}
console.log(JSON.stringify(out, null, 1));
