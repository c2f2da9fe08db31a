// One-off profile: Chrome trace of a 1,000-run list first paint.
import { join } from 'node:path';
import { writeFileSync } from 'node:fs';
import { launch, startView, tempDir, until } from '../../../tools/console-tests/lib.mjs';
const big = process.argv[2];
const tmp = tempDir('tbsim-prof-');
const browser = await launch(); const { page } = browser;
const list = await startView([big], join(tmp, 'f'), ['--no-cache'], { timeoutMs: 300_000 });
for (;;) { const l = await (await fetch(`${list.url}/v1/console/runs`)).json(); if (!l.runs.some((r) => r.indexing)) break; await new Promise((r) => setTimeout(r, 50)); }
await page.addInitScript(() => {
  window.__rowsPainted = null;
  const look = () => { const body = document.querySelector('[data-testid="runs-body"]');
    if (body && body.children.length >= 50) requestAnimationFrame(() => { window.__rowsPainted = performance.now(); });
    else requestAnimationFrame(look); };
  requestAnimationFrame(look);
});
await page.goto(`${list.url}/#/`); await until(async () => page.evaluate(() => window.__rowsPainted !== null), { timeoutMs: 60000 });
await page.goto('about:blank');
const cdp = await page.context().newCDPSession(page);
await cdp.send('Profiler.enable'); await cdp.send('Profiler.setSamplingInterval', { interval: 200 }); await cdp.send('Profiler.start');
await page.goto(`${list.url}/#/`); await until(async () => page.evaluate(() => window.__rowsPainted !== null), { timeoutMs: 60000 });
const { profile } = await cdp.send('Profiler.stop');
const r = await page.evaluate(() => ({ at: window.__rowsPainted, res: performance.getEntriesByType('resource').map((e) => `${e.name.replace(/^https?:\/\/[^/]+/, '')} ${Math.round(e.startTime)}-${Math.round(e.responseEnd)} ${e.transferSize}`), nav: performance.getEntriesByType('navigation')[0].responseEnd }));
console.log(JSON.stringify(r, null, 1));
// self time by function
const self = new Map(); const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const dt = profile.timeDeltas; const counts = new Map();
profile.samples.forEach((id, i) => counts.set(id, (counts.get(id) || 0) + (dt[i] || 0)));
for (const [id, us] of counts) { const n = byId.get(id); const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber}`; self.set(k, (self.get(k) || 0) + us); }
console.log([...self].sort((a, b) => b[1] - a[1]).slice(0, 25).map(([k, v]) => `${(v / 1000).toFixed(1)} ms ${k}`).join('\n'));
await list.stop(); await browser.close();
