// Compare first paints with two app.js versions served in place of the embedded one.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { launch, startView, tempDir } from '/work/wt/s12-console/tools/console-tests/lib.mjs';
const [oldJs, newJs, reps, ...rest] = process.argv.slice(2);
const dirs = rest.filter((a) => !a.startsWith('--'));
const viewArgs = rest.filter((a) => a.startsWith('--'));
const tmp = tempDir('tbsim-cmp-');
const browser = await launch();
const { page } = browser;
const res = {};
for (let r = 0; r < Number(reps); r++) {
  for (const [label, file] of [['old', oldJs], ['new', newJs]]) {
    const body = readFileSync(file, 'utf8');
    await page.unroute('**/assets/app.js').catch(() => {});
    await page.route('**/assets/app.js', (route) => route.fulfill({ body, contentType: 'text/javascript; charset=utf-8' }));
    for (const dir of dirs) {
      const name = dir.split('/').filter(Boolean).pop();
      const s = await startView([dir], join(tmp, 'forks'), viewArgs.flatMap((a) => a.split('=')));
      const id = (await (await fetch(`${s.url}/v1/console/runs`)).json()).runs[0].id;
      const times = [];
      for (let k = 0; k < 3; k++) {
        await page.goto('about:blank');
        await page.goto(`${s.url}/#/run/${encodeURIComponent(id)}`);
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
      (res[`${label} ${name}`] ||= []).push(times);
      await s.stop();
    }
  }
}
await browser.close();
for (const [k, v] of Object.entries(res)) console.log(k, JSON.stringify(v));
