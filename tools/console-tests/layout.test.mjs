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

test('keyboard: Tab reaches the pause, step and resume buttons; Enter presses them', async () => {
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
    const posted = (action) => page.waitForResponse((r) => r.url().endsWith(`${base}/${action}`) && r.request().method() === 'POST');
    // Pause (pressed while paused: a no-op that says so).
    await tabTo('btn-pause');
    assert.equal(await page.locator(tid('btn-pause')).getAttribute('aria-pressed'), 'true');
    let answered = posted('pause');
    await page.keyboard.press('Enter');
    assert.equal((await answered).status(), 200);
    assert.equal((await api(server.url, base)).state, 'paused');
    // Step. The count is the server's, read once the pause has answered: a step
    // in flight when the run was paused may still land after the page said
    // "paused", so the page's own count can trail by one.
    await tabTo('btn-step');
    const before = (await api(server.url, base)).steps;
    answered = posted('step');
    await page.keyboard.press('Enter');
    assert.equal((await answered).status(), 200, 'Enter on the focused Step button posts a step');
    await until(async () => (await api(server.url, base)).steps > before, { what: 'a step by Enter' });
    const after = (await api(server.url, base)).steps;
    assert.ok(after >= steps + 1, `the run stepped (${steps} -> ${after})`);
    await until(async () => Number(await page.locator(tid('run-steps')).getAttribute('data-steps')) === after, { what: 'the page shows the step' });
    await until(async () => (await page.locator(tid('run-state')).getAttribute('data-state')) === 'paused', { what: 'paused again' });
    // A focused button is visibly outlined.
    const outline = await page.evaluate(() => getComputedStyle(document.activeElement).outlineStyle);
    assert.notEqual(outline, 'none', 'visible focus');
    // Resume: the run goes on to its end.
    await tabTo('btn-resume');
    answered = posted('resume');
    await page.keyboard.press('Enter');
    assert.equal((await answered).status(), 200);
    await until(async () => (await page.locator(tid('run-state')).getAttribute('data-state')) === 'finished', { timeoutMs: 60_000, what: 'the run to finish' });
  } finally {
    await b.close();
  }
});

test('with --console-token the page asks for it, then works over the cookie /login sets', async () => {
  const tokenOut = tempDir();
  const guarded = await startServe(tokenOut, ['--token', 'agents-only', '--console-token', 'sesame-123']);
  const b = await launch();
  try {
    const { page } = b;
    await page.goto(`${guarded.url}/`);
    await page.locator(tid('login-form')).waitFor();
    assert.match(await page.locator(tid('boot-error')).textContent(), /unauthorized/);
    await page.fill(tid('login-token'), 'sesame-123');
    await page.click(tid('login-submit'));
    await page.locator(tid('start-form')).waitFor();
    await page.selectOption(tid('start-scenario'), 'meeting-only');
    await page.selectOption(tid('start-agent'), 'oracle');
    await page.click(tid('start-submit'));
    await until(async () => (await page.locator(tid('run-state')).getAttribute('data-state')) === 'finished', { what: 'the run to finish' });
    await until(async () => (await page.locator(`${tid('timeline')} > li[data-type="end"]`).count()) === 1, { what: 'the streamed timeline' });
  } finally {
    await b.close();
    await guarded.stop();
    rmSync(tokenOut, { recursive: true, force: true });
  }
});
