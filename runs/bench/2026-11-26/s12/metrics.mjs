import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { launch, startView, tempDir } from '/work/wt/s12-console/tools/console-tests/lib.mjs';
const [js, dir, ...viewArgs] = process.argv.slice(2);
const tmp = tempDir('tbsim-met-');
const browser = await launch();
const { page, context } = browser;
const body = readFileSync(js, 'utf8');
await page.route('**/assets/app.js', (route) => route.fulfill({ body, contentType: 'text/javascript; charset=utf-8' }));
const s = await startView([dir], join(tmp, 'forks'), viewArgs);
const id = (await (await fetch(`${s.url}/v1/console/runs`)).json()).runs[0].id;
const cdp = await context.newCDPSession(page);
await cdp.send('Performance.enable');
for (let k = 0; k < 3; k++) {
  await page.goto('about:blank');
  const m0 = Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
  await page.goto(`${s.url}/#/run/${encodeURIComponent(id)}`);
  const paint = await page.evaluate(() => new Promise((resolve) => {
    const check = () => {
      const c = document.querySelector('[data-testid="timeline-count"]');
      const w = document.querySelector('[data-testid="world-note"]');
      if (c && Number(c.dataset.count) > 0 && w && w.dataset.step !== undefined) resolve({ t: performance.now(), nodes: document.getElementsByTagName('*').length });
      else requestAnimationFrame(check);
    };
    check();
  }));
  const m1 = Object.fromEntries((await cdp.send('Performance.getMetrics')).metrics.map((m) => [m.name, m.value]));
  const d = (k) => Math.round((m1[k] - m0[k]) * 1000);
  console.log(`load ${k}: paint ${Math.round(paint.t)} nodes ${paint.nodes} layout ${d('LayoutDuration')} style ${d('RecalcStyleDuration')} script ${d('ScriptDuration')} task ${d('TaskDuration')} layouts ${m1.LayoutCount - m0.LayoutCount}`);
}
await s.stop();
await browser.close();
