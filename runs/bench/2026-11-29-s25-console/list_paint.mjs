import { linkSync, mkdirSync, readFileSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { launch, startView, tempDir, until } from '../../../tools/console-tests/lib.mjs';
const dir = process.argv[2]; const n = Number(process.argv[3] || 1000); const loadsN = Number(process.argv[4] || 5);
const big = '/tmp/s25/big1000';
const result = JSON.parse(readFileSync(join(dir, 'result.json'), 'utf8'));
if (!existsSync(big)) for (let i = 0; i < n; i++) {
  const d = join(big, `batch-${Math.floor(i / 100)}`, result.scenario, `trial-${i % 100}`);
  mkdirSync(d, { recursive: true });
  for (const f of ['trajectory.jsonl', 'scenario.ron', 'run.json']) linkSync(join(dir, f), join(d, f));
  writeFileSync(join(d, 'result.json'), JSON.stringify({ ...result, trial: i % 100, checkpoint_score: (i % 101) / 100 }));
}
const tmp = tempDir('tbsim-list-');
const browser = await launch(); const { page } = browser;
const list = await startView([big], join(tmp, 'forks2'), ['--no-cache'], { timeoutMs: 300_000 });
for (;;) { const l = await (await fetch(`${list.url}/v1/console/runs`)).json(); if (!l.runs.some((r) => r.indexing)) break; await new Promise((r) => setTimeout(r, 50)); }
const want = 50; const loads = [];
await page.addInitScript(({ want }) => {
  window.__rowsPainted = null;
  const look = () => { const body = document.querySelector('[data-testid="runs-body"]');
    if (body && body.children.length >= want) requestAnimationFrame(() => { window.__rowsPainted = { at: performance.now(), rows: body.children.length }; });
    else requestAnimationFrame(look); };
  requestAnimationFrame(look);
}, { want });
for (let k = 0; k < loadsN; k++) {
  await page.goto(`${list.url}/#/`);
  await until(async () => page.evaluate(() => window.__rowsPainted !== null), { timeoutMs: 120_000, what: 'the list painted' });
  const r = await page.evaluate(() => ({ ...window.__rowsPainted, res: performance.getEntriesByType('resource').map((e) => `${e.name.replace(/^https?:\/\/[^/]+/, '')} ${Math.round(e.startTime)}-${Math.round(e.responseEnd)} ${e.transferSize}`), nav: (() => { const n = performance.getEntriesByType('navigation')[0]; return { resp: Math.round(n.responseEnd), dcl: Math.round(n.domContentLoadedEventEnd) }; })() }));
  loads.push(r);
  await page.goto('about:blank');
}
console.log(JSON.stringify({ painted_ms: loads.map((l) => Math.round(l.at)), detail: loads }, null, 1));
await list.stop(); await browser.close();
