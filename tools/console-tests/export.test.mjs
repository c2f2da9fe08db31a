// Static export: `tbsim view RUN… --export DIR` opens from disk (file://) in
// Chromium with no server running, every view works, and the page makes no
// request beyond its own files.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { after, before, test } from 'node:test';

import { launch, tbsimSync, tempDir, tid, until } from './lib.mjs';

let tmp;
let browser;
let site;

before(async () => {
  tmp = tempDir();
  for (const [agent, out] of [['oracle', 'oracle'], ['adversary:read-everything', 'explore']]) {
    const r = tbsimSync(['run', 'content/scenarios/busy-day.ron', '--agent', agent, '--out', join(tmp, out, 'busy-day')]);
    if (r.status !== 0) throw new Error(r.stderr);
  }
  site = join(tmp, 'site');
  const r = tbsimSync(['view', join(tmp, 'oracle'), join(tmp, 'explore'), '--export', site]);
  assert.equal(r.status, 0, r.stderr);
  browser = await launch({ width: 1280, height: 800 });
});

after(async () => {
  if (browser) await browser.close();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test('an export opens from disk with no server: runs, timeline, world, files, compare', async () => {
  const { page, errors } = browser;
  const requests = [];
  page.on('request', (r) => requests.push(r.url()));
  const index = pathToFileURL(join(site, 'index.html')).href;
  await page.goto(index);
  await page.locator(tid('run-row-oracle:busy-day')).waitFor();
  assert.match(await page.locator(tid('mode')).textContent(), /static export/);
  // A run at a step: timeline, scrubber, world.
  await page.goto(`${index}#/run/${encodeURIComponent('oracle:busy-day')}/step/6`);
  await until(async () => Number(await page.locator(tid('timeline-count')).getAttribute('data-count')) > 20, { what: 'the timeline' });
  await until(async () => (await page.locator(tid('world-note')).getAttribute('data-step')) === '6', { what: 'the world at step 6' });
  // Forking needs a server: not offered.
  assert.equal(await page.locator(tid('fork-button')).isVisible(), false);
  // Scrub to the end: the world follows.
  await page.locator(tid('scrub-latest')).click();
  await until(async () => Number(await page.locator(tid('world-note')).getAttribute('data-step')) > 6, { what: 'the last world' });
  // Files: open one from the drive.
  await page.locator(tid('tab-files')).click();
  const fileLink = page.locator(`${tid('file-tree')} button, ${tid('file-tree')} a`).first();
  await fileLink.click();
  await until(async () => (await page.locator(`${tid('file-text')}, ${tid('file-image')}`).count()) > 0, { what: 'a file shown' });
  // Chats and calendar panels render.
  await page.locator(tid('tab-chats')).click();
  await page.locator(tid('tab-calendar')).click();
  // Compare, from the list.
  await page.goto(index);
  await page.locator(tid('compare-select-oracle:busy-day')).check();
  await page.locator(tid('compare-select-explore:busy-day')).check();
  await page.locator(tid('compare-selected')).click();
  await page.locator(tid('divergence-row')).waitFor();
  // Nothing but the export's own files was asked for.
  const foreign = requests.filter((u) => !u.startsWith(pathToFileURL(site).href) && !u.startsWith('data:') && !u.startsWith('blob:'));
  assert.deepEqual(foreign, [], 'no network request');
  assert.ok(requests.some((u) => /\/data\/run-\d+\.js$/.test(u)), 'run data loaded on demand');
  assert.deepEqual(errors, []);
});
