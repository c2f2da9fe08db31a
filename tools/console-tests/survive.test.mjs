// Runs that survive: a queued batch job says "queued" (no host path, its scenario's
// day count, nothing to fork); "Close run" asks first; hint buttons say at once why
// they wait for "From", which is remembered across page loads.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';

import { api, launch, startTbsim, tempDir, tid, until } from './lib.mjs';

let tmp;
let browser;
const servers = [];

before(async () => {
  tmp = tempDir();
  browser = await launch();
});

after(async () => {
  if (browser) await browser.close();
  for (const s of servers) await s.stop();
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

test('a queued job, a confirmed close and a remembered sender', async () => {
  const out = join(tmp, 'batch');
  const server = await startTbsim(['run', 'content/scenarios/two-days.ron', '--trials', '2', '--agent', 'idle',
    '--concurrency', '1', '--out', out, '--ui', '127.0.0.1:0', '--ui-paused']);
  servers.push(server);
  const { page, errors } = browser;
  await until(async () => {
    const { runs } = await api(server.url, '/v1/console/runs');
    return runs.length === 2 && runs[0].state === 'paused' && runs[1].state === 'queued';
  }, { what: 'job-0 paused, job-1 queued' });

  // The queued job.
  const res = await fetch(`${server.url}/v1/console/runs/job-1/world`);
  assert.equal(res.status, 409);
  const body = await res.text();
  assert.ok(!body.includes(tmp) && !body.includes('/tmp'), `no host path: ${body}`);
  assert.match(body, /queued/);
  await page.goto(`${server.url}/#/run/job-1`);
  await until(async () => (await page.locator(tid('run-clock')).textContent()) === 'queued', { what: 'queued on the page' });
  assert.equal((await page.locator(tid('run-day')).textContent()).trim(), '– / 2');
  assert.equal(await page.locator(tid('fork-button')).isVisible(), false, 'nothing to fork');
  assert.equal(await page.locator(tid('run-error')).isVisible(), false, 'no error shown');

  // The paused job: hint buttons wait for a name, and say so beside them.
  await page.evaluate(() => localStorage.clear());
  await page.goto(`${server.url}/#/run/job-0`);
  await page.reload();
  const hint = page.locator(`${tid('hint-list')} button`).first();
  await hint.waitFor({ timeout: 20_000 });
  assert.equal(await hint.isDisabled(), true);
  assert.equal(await page.locator(tid('guide-need-name')).isVisible(), true);
  assert.equal(await hint.getAttribute('aria-describedby'), 'guide-need-name');
  await page.fill(tid('guide-from'), 'Ana');
  await until(async () => !(await hint.isDisabled()), { what: 'the hint button enabled' });
  assert.equal(await page.locator(tid('guide-need-name')).isVisible(), false);
  await page.reload();
  await page.locator(tid('guide-from')).waitFor();
  assert.equal(await page.locator(tid('guide-from')).inputValue(), 'Ana', '"From" remembered');

  // Closing asks first; "Keep it going" keeps it.
  await page.locator(tid('btn-close')).waitFor({ state: 'visible' });
  await page.click(tid('btn-close'));
  await page.locator(tid('close-confirm')).waitFor({ state: 'visible' });
  await page.click(tid('btn-close-cancel'));
  assert.equal(await page.locator(tid('close-confirm')).isVisible(), false);
  assert.equal((await api(server.url, '/v1/console/runs/job-0')).state, 'paused');
  await page.click(tid('btn-close'));
  await page.click(tid('btn-close-confirm'));
  await until(async () => (await api(server.url, '/v1/console/runs/job-0')).state === 'finished', { what: 'job-0 closed' });
  assert.deepEqual(errors, []);
});
