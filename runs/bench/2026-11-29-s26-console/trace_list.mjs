// One-off: Chrome trace (devtools.timeline) of a list first paint; top event durations.
import { join } from 'node:path';
import { launch, startView, tempDir, until } from '../../../tools/console-tests/lib.mjs';
const big = process.argv[2]; const hash = process.argv[3] || '#/';
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
const times = [];
for (let k = 0; k < 3; k++) { await page.goto(`${list.url}/${hash}`); await until(async () => page.evaluate(() => window.__rowsPainted !== null), { timeoutMs: 60000 }); times.push(Math.round(await page.evaluate(() => window.__rowsPainted))); await page.goto('about:blank'); }
console.log('painted', times);
const cdp = await page.context().newCDPSession(page);
const events = [];
cdp.on('Tracing.dataCollected', (d) => events.push(...d.value));
const done = new Promise((r) => cdp.once('Tracing.tracingComplete', r));
await cdp.send('Tracing.start', { categories: 'devtools.timeline,blink.user_timing,v8.execute', transferMode: 'ReportEvents' });
await page.goto(`${list.url}/${hash}`); await until(async () => page.evaluate(() => window.__rowsPainted !== null), { timeoutMs: 60000 });
const at = await page.evaluate(() => window.__rowsPainted);
await cdp.send('Tracing.end'); await done;
const nav = events.find((e) => e.name === 'navigationStart' || e.name === 'NavigationStart' ) || events.find((e)=>e.name==='TracingStartedInBrowser');
const t0 = Math.min(...events.filter((e) => e.ph === 'X' && e.ts > 0).map((e) => e.ts));
const tot = new Map();
for (const e of events) if (e.ph === 'X' && e.dur) { tot.set(e.name, (tot.get(e.name) || 0) + e.dur); }
console.log('painted', Math.round(at));
console.log([...tot].sort((a, b) => b[1] - a[1]).slice(0, 20).map(([k, v]) => `${(v / 1000).toFixed(1)} ms ${k}`).join('\n'));
const big_ = events.filter((e) => e.ph === 'X' && e.dur > 8000 && ['FunctionCall','EvaluateScript','Layout','UpdateLayoutTree','Paint','ParseHTML','RunTask','v8.run','TimerFire','FireAnimationFrame','EventDispatch','PrePaint','Layerize','v8.compile','HitTest','ResourceReceivedData','ParseAuthorStyleSheet','UpdateLayerTree','Commit'].includes(e.name)).map((e) => `${((e.ts - t0) / 1000).toFixed(0)}+${(e.dur / 1000).toFixed(0)} ${e.name} ${e.args?.data?.functionName||''}${e.args?.data?.url?.split('/').pop()||''}:${e.args?.data?.lineNumber||''}`);
console.log(big_.join('\n'));
await list.stop(); await browser.close();
