import { join } from 'node:path';
import { launch, startView, tempDir } from '/work/wt/s12-console/tools/console-tests/lib.mjs';
const [dir, ...viewArgs] = process.argv.slice(2);
const tmp = tempDir('tbsim-prof-');
const browser = await launch();
const { page, context } = browser;
const s = await startView([dir], join(tmp, 'forks'), viewArgs);
const id = (await (await fetch(`${s.url}/v1/console/runs`)).json()).runs[0].id;
const cdp = await context.newCDPSession(page);
if (process.env.APPJS) {
  const { readFileSync } = await import('node:fs');
  const body = readFileSync(process.env.APPJS, 'utf8');
  await page.route('**/assets/app.js', (route) => route.fulfill({ body, contentType: 'text/javascript; charset=utf-8' }));
}
await page.goto('about:blank');
await cdp.send('Profiler.enable');
await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
await cdp.send('Profiler.start');
await page.goto(`${s.url}/#/run/${encodeURIComponent(id)}`);
const paint = await page.evaluate(() => new Promise((resolve) => {
  const check = () => {
    const c = document.querySelector('[data-testid="timeline-count"]');
    const w = document.querySelector('[data-testid="world-note"]');
    if (c && Number(c.dataset.count) > 0 && w && w.dataset.step !== undefined) resolve(performance.now());
    else requestAnimationFrame(check);
  };
  check();
}));
const { profile } = await cdp.send('Profiler.stop');
// self time per function
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const self = new Map();
const dt = profile.timeDeltas;
for (let i = 0; i < profile.samples.length; i++) {
  const n = byId.get(profile.samples[i]);
  const key = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber + 1}`;
  self.set(key, (self.get(key) || 0) + (dt[i] || 0) / 1000);
}
// total (inclusive) time per function
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children || []) parent.set(c, n.id);
const incl = new Map();
for (let i = 0; i < profile.samples.length; i++) {
  const seen = new Set();
  let id = profile.samples[i];
  while (id !== undefined) {
    const n = byId.get(id);
    const key = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber + 1}`;
    if (!seen.has(key)) { incl.set(key, (incl.get(key) || 0) + (dt[i] || 0) / 1000); seen.add(key); }
    id = parent.get(id);
  }
}
console.log('paint', Math.round(paint));
console.log('--- self');
for (const [k, v] of [...self].sort((a, b) => b[1] - a[1]).slice(0, 20)) console.log(v.toFixed(1), k);
console.log('--- inclusive');
for (const [k, v] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, 30)) console.log(v.toFixed(1), k);
await s.stop();
await browser.close();
