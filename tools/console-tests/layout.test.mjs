// The runs list and the run view fit a phone (375×700) and a laptop (1280×800)
// without sideways scrolling, and the run controls work from the keyboard.

import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, test } from 'node:test';

import { api, launch, overflow, startServe, tempDir, tid, until } from './lib.mjs';

let out;
let server;
let runId;

before(async () => {
  out = tempDir();
  server = await startServe(out);
  const r = await api(server.url, '/v1/console/start', { method: 'POST', body: { scenario: 'busy-day', agent: 'oracle', paused: true } });
  runId = r.id;
  const base = `/v1/console/runs/${encodeURIComponent(runId)}`;
  for (let k = 0; k < 4; k++) {
    const before = (await api(server.url, base)).steps;
    await api(server.url, `${base}/step`, { method: 'POST' });
    await until(async () => (await api(server.url, base)).steps > before, { what: 'a step' });
  }
  // A second run, finished, so the list has more than one row.
  await api(server.url, '/v1/console/start', { method: 'POST', body: { scenario: 'meeting-only', agent: 'oracle' } });
});

after(async () => {
  if (server) await server.stop();
  if (out) rmSync(out, { recursive: true, force: true });
});

for (const [width, height] of [[375, 700], [1280, 800]]) {
  test(`no horizontal overflow at ${width}×${height}`, async () => {
    const b = await launch({ width, height });
    try {
      const { page, errors } = b;
      await page.goto(`${server.url}/#/`);
      await page.locator(tid(`run-row-${runId}`)).waitFor();
      let o = await overflow(page);
      assert.ok(o.scrollWidth <= o.innerWidth, `runs list: ${JSON.stringify(o)}`);
      await page.goto(`${server.url}/#/run/${encodeURIComponent(runId)}`);
      await until(async () => (await page.locator(`${tid('timeline')} > li`).count()) > 4, { what: 'the timeline' });
      await page.locator(tid('task-list')).waitFor();
      o = await overflow(page);
      assert.ok(o.scrollWidth <= o.innerWidth, `run view: ${JSON.stringify(o)}`);
      for (const tab of ['files', 'chats', 'calendar']) {
        await page.click(tid(`tab-${tab}`));
        o = await overflow(page);
        assert.ok(o.scrollWidth <= o.innerWidth, `run view, ${tab}: ${JSON.stringify(o)}`);
      }
      // Every input has a label.
      const unlabelled = await page.evaluate(() => Array.from(document.querySelectorAll('input, select, textarea'))
        .filter((el) => !(el.labels && el.labels.length) && !el.getAttribute('aria-label') && !el.closest('[hidden]'))
        .map((el) => el.dataset.testid || el.id || el.outerHTML.slice(0, 60)));
      assert.deepEqual(unlabelled, []);
      assert.deepEqual(errors, [], 'no script errors');
    } finally {
      await b.close();
    }
  });
}

test('keyboard: Tab reaches the step, resume and pause buttons; Enter presses them', async () => {
  const b = await launch();
  try {
    const { page } = b;
    const base = `/v1/console/runs/${encodeURIComponent(runId)}`;
    await page.goto(`${server.url}/#/run/${encodeURIComponent(runId)}`);
    await until(async () => (await page.locator(tid('run-state')).getAttribute('data-state')) === 'paused', { what: 'paused' });
    const tabTo = async (testid) => {
      await page.evaluate(() => document.activeElement && document.activeElement.blur());
      for (let k = 0; k < 80; k++) {
        await page.keyboard.press('Tab');
        const at = await page.evaluate(() => document.activeElement && document.activeElement.dataset.testid);
        if (at === testid) return k + 1;
      }
      throw new Error(`Tab never reached ${testid}`);
    };
    const steps = Number(await page.locator(tid('run-steps')).getAttribute('data-steps'));
    await tabTo('btn-step');
    await page.keyboard.press('Enter');
    await until(async () => Number(await page.locator(tid('run-steps')).getAttribute('data-steps')) === steps + 1, { what: 'a step by Enter' });
    await until(async () => (await page.locator(tid('run-state')).getAttribute('data-state')) === 'paused', { what: 'paused again' });
    // A focused element is visibly outlined.
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
    assert.notEqual(outline, 'none', 'visible focus');

    await tabTo('btn-resume');
    const resumed = page.waitForResponse((r) => r.url().endsWith(`${base}/resume`) && r.request().method() === 'POST');
    await page.keyboard.press('Enter');
    assert.equal((await resumed).status(), 200);
    // The pause button is enabled while the run goes; Tab reaches it and Enter
    // sends the pause (which lands unless the run finished first).
    await until(async () => (await page.locator(tid('btn-pause')).isEnabled()) || (await page.locator(tid('run-state')).getAttribute('data-state')) === 'finished', { what: 'pause enabled' });
    if (await page.locator(tid('btn-pause')).isEnabled()) {
      await tabTo('btn-pause');
      const paused = page.waitForResponse((r) => r.url().endsWith(`${base}/pause`) && r.request().method() === 'POST');
      await page.keyboard.press('Enter');
      const st = (await paused).status();
      assert.ok(st === 200 || st === 409, `pause answered ${st}`);
    }
    const d = await api(server.url, base);
    assert.ok(['paused', 'finished'].includes(d.state) || d.state === 'running', d.state);
  } finally {
    await b.close();
  }
});
