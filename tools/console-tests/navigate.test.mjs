// Deep links and navigation: `#/run/<id>/step/<n>` opens a run at a step, the
// scrubber scrolls the timeline to its step and keeps the address in step, and
// clicking an entry moves the scrubber there.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { api, launch, oracleRun, startView, tempDir, tid, until } from './lib.mjs';

let tmp;
let oracleDir;
let browser;
const servers = [];

before(async () => {
  tmp = tempDir();
  oracleDir = oracleRun('busy-day', join(tmp, 'busy-day'));
  browser = await launch({ width: 1280, height: 700 });
});

after(async () => {
  if (browser) await browser.close();
  for (const s of servers) await s.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

/** Whether the step's decision entry is inside the timeline box's visible part. */
async function inView(page, step) {
  return page.evaluate((n) => {
    const li = document.querySelector(`[data-testid="timeline"] > li[data-type="decision"][data-step="${n}"]`);
    const box = li && li.closest('.timeline-box');
    if (!li || !box) return false;
    const a = li.getBoundingClientRect();
    const b = box.getBoundingClientRect();
    return a.top >= b.top - 1 && a.top < b.bottom;
  }, step);
}

test('a step has an address; the scrubber and the timeline follow each other', async () => {
  const server = await startView([oracleDir], join(tmp, 'forks'));
  servers.push(server);
  const { page, errors } = browser;
  const { runs } = await api(server.url, '/v1/console/runs');
  const id = runs[0].id;
  const steps = (await api(server.url, `/v1/console/runs/${encodeURIComponent(id)}`)).steps;
  assert.ok(steps >= 12, `a long enough run (${steps} steps)`);
  const late = steps - 3;

  // Opened at a step: the scrubber, the world and the timeline's scroll are there.
  await page.goto(`${server.url}/#/run/${encodeURIComponent(id)}/step/${late}`);
  await page.locator(`${tid('world-note')}[data-step="${late}"]`).waitFor({ timeout: 20_000 });
  assert.equal(await page.locator(tid('scrub-label')).getAttribute('data-step'), String(late));
  await until(() => inView(page, late), { what: `step ${late} scrolled into the timeline` });
  assert.equal(await inView(page, 1), false, 'the start is scrolled away');

  // The scrubber scrolls the timeline and writes the step into the address.
  await page.locator(tid('scrub-range')).fill('2');
  await until(() => inView(page, 2), { what: 'step 2 in view' });
  assert.equal(await inView(page, late), false);
  await until(() => page.url().endsWith(`/step/2`), { what: 'the address at step 2' });
  await page.locator(`${tid('world-note')}[data-step="2"]`).waitFor();

  // Clicking an entry moves the scrubber to its step.
  const entry = page.locator(`${tid('timeline')} > li[data-type="decision"][data-step="5"] .idx`);
  await entry.click();
  await until(async () => (await page.locator(tid('scrub-label')).getAttribute('data-step')) === '5', { what: 'the scrubber at 5' });
  await page.locator(`${tid('world-note')}[data-step="5"]`).waitFor();
  await until(() => page.url().endsWith('/step/5'), { what: 'the address at step 5' });
  assert.equal(await page.locator(`${tid('timeline')} > li.current`).getAttribute('data-step'), '5');

  // The address reloads to the same step.
  await page.reload();
  await page.locator(`${tid('world-note')}[data-step="5"]`).waitFor({ timeout: 20_000 });
  assert.deepEqual(errors, []);
});
