// One-off: Chrome profile of "Next" steps and a drag on a long run.
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { launch, startView, tempDir, tid, until } from '../../../tools/console-tests/lib.mjs';
const dir = process.argv[2];
const tmp = tempDir('tbsim-prof-');
const browser = await launch(); const { page } = browser;
const server = await startView([dir], join(tmp, 'f'), ['--no-cache']);
const id = (await (await fetch(`${server.url}/v1/console/runs`)).json()).runs[0].id;
const total = JSON.parse(readFileSync(join(dir, 'result.json'), 'utf8')).steps; const mid = Math.floor(total / 2);
await page.goto(`${server.url}/#/run/${encodeURIComponent(id)}/step/${mid}`);
await page.locator(`${tid('world-note')}[data-step="${mid}"]`).waitFor({ timeout: 120_000 });
await page.waitForTimeout(8000);
const cdp = await page.context().newCDPSession(page);
await cdp.send('Profiler.enable'); await cdp.send('Profiler.setSamplingInterval', { interval: 200 }); await cdp.send('Profiler.start');
const events = [];
cdp.on('Tracing.dataCollected', (d) => events.push(...d.value));
const done = new Promise((r) => cdp.once('Tracing.tracingComplete', r));
await cdp.send('Tracing.start', { categories: 'devtools.timeline', transferMode: 'ReportEvents' });
const r = await page.evaluate(async ({ mid }) => {
  const note = document.querySelector('[data-testid="world-note"]'); const next = document.querySelector('[data-testid="scrub-next"]');
  const out = [];
  for (let k = 1; k <= 8; k++) { const t0 = performance.now(); next.click(); await new Promise((ok) => { const look = () => note.dataset.step === String(mid + k) ? requestAnimationFrame(() => ok()) : requestAnimationFrame(look); look(); }); out.push(Math.round(performance.now() - t0)); }
  return out;
}, { mid });
console.log('next ms', r);
await cdp.send('Tracing.end'); await done;
const { profile } = await cdp.send('Profiler.stop');
for (const e of events) if (e.name === "Paint" && e.dur > 3000) console.log("paint", (e.dur/1000).toFixed(1), JSON.stringify(e.args.data).slice(0,200));
const tot = new Map();
for (const e of events) if (e.ph === 'X' && e.dur) tot.set(e.name, (tot.get(e.name) || 0) + e.dur);
console.log([...tot].sort((a, b) => b[1] - a[1]).slice(0, 14).map(([k, v]) => `${(v / 1000).toFixed(1)} ms ${k}`).join('\n'));
const self = new Map(); const byId = new Map(profile.nodes.map((n) => [n.id, n])); const counts = new Map();
profile.samples.forEach((id, i) => counts.set(id, (counts.get(id) || 0) + (profile.timeDeltas[i] || 0)));
for (const [id, us] of counts) { const n = byId.get(id); const k = `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber}`; self.set(k, (self.get(k) || 0) + us); }
console.log([...self].sort((a, b) => b[1] - a[1]).slice(0, 20).map(([k, v]) => `${(v / 1000).toFixed(1)} ms ${k}`).join('\n'));
await server.stop(); await browser.close();
