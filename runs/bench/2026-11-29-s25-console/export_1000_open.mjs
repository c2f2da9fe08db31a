import { pathToFileURL } from 'node:url';
import { launch } from '../../../tools/console-tests/lib.mjs';
const browser = await launch(); const out = [];
for (let k = 0; k < 3; k++) {
  const page = await browser.context.newPage();
  await page.goto(`${pathToFileURL('/tmp/s25/expk/index.html').href}#/`);
  const t = await page.evaluate(() => new Promise((ok) => { const look = () => (document.querySelectorAll('[data-testid="runs-body"] > tr.run').length >= 1000 ? requestAnimationFrame(() => ok(performance.now())) : requestAnimationFrame(look)); look(); }));
  await page.goto(`${pathToFileURL('/tmp/s25/expk/index.html').href}#/run/${encodeURIComponent('k1000:s-49:meeting-only:trial-19')}`);
  const t2 = await page.evaluate(() => new Promise((ok) => { const look = () => (document.querySelector('[data-testid="world-note"][data-step]') && document.querySelector('[data-testid="timeline"] > li[data-type="end"]') ? requestAnimationFrame(() => ok(performance.now())) : requestAnimationFrame(look)); look(); }));
  out.push({ list_1000_rows_ms: Math.round(t), run_whole_ms: Math.round(t2) });
  await page.close();
}
console.log(JSON.stringify(out)); await browser.close();
