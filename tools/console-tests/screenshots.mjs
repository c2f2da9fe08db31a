// Screenshots of the console for docs/ui/: `node tools/console-tests/screenshots.mjs`.
//
// Starts `tbsim serve` on a free loopback port with runs worth looking at (busy-day
// with the oracle paused partway, a finished meeting-only run, a scenario with an
// image on its drive, a play session of meeting-only) and writes PNGs of each view
// at 1280×800 (and the phone views at 375×700) to docs/ui/.
//
// Environment: TBSIM_BIN (default: the newer of target/release/tbsim and
// target/debug/tbsim; build one with `cargo build -p tbsim`), CHROMIUM (default
// /usr/bin/chromium), SHOTS_DIR (default docs/ui).

import { mkdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';

import { ROOT, api, launch, startServe, tempDir, tid, until } from './lib.mjs';

const outDir = process.env.SHOTS_DIR || join(ROOT, 'docs/ui');
mkdirSync(outDir, { recursive: true });
const tmp = tempDir();
const server = await startServe(join(tmp, 'runs'));
const url = server.url;
const runBase = (id) => `/v1/console/runs/${encodeURIComponent(id)}`;

async function start(body) {
  return (await api(url, '/v1/console/start', { method: 'POST', body })).id;
}

async function stepTo(id, n) {
  for (;;) {
    const d = await api(url, runBase(id));
    if (d.steps >= n || d.state === 'finished') return d;
    await api(url, `${runBase(id)}/step`, { method: 'POST' });
    await until(async () => (await api(url, runBase(id))).steps > d.steps, { what: 'a step' });
  }
}

async function act(id, name, args) {
  return api(url, `${runBase(id)}/act`, { method: 'POST', body: { tool_calls: [{ name, arguments: args }] } });
}

const written = [];
async function shot(page, name) {
  const file = join(outDir, `${name}.png`);
  await page.screenshot({ path: file });
  written.push(`${file} (${Math.round(statSync(file).size / 1024)} KB)`);
}

let browser;
try {
  // Runs worth showing.
  const done = await start({ scenario: 'meeting-only', agent: 'oracle' });
  const busy = await start({ scenario: 'busy-day', agent: 'oracle', paused: true, hints: 1 });
  await stepTo(busy, 3);
  await api(url, `${runBase(busy)}/guide`, { method: 'POST', body: { by: 'human:Ana', task: 'task/sync', kind: 'message', text: 'The sync notes are on the shared drive.' } });
  await stepTo(busy, 14);
  const info = await api(url, '/v1/console/info');
  const imageScenario = info.scenarios.find((s) => s === 'traineebench-cl-002');
  let image = null;
  if (imageScenario) {
    image = await start({ scenario: imageScenario, agent: 'oracle', paused: true });
    await stepTo(image, 2);
  }
  const play = await start({ scenario: 'meeting-only', agent: 'human:Ana' });
  await act(play, 'my_tasks', {});
  await act(play, 'wait', { until: '2025-10-08T10:00:00' });
  await until(async () => (await api(url, runBase(done))).state === 'finished', { what: 'meeting-only to finish' });

  browser = await launch({ width: 1280, height: 800 });
  const { page } = browser;

  // Runs list.
  await page.goto(`${url}/#/`);
  await page.locator(tid(`run-row-${busy}`)).waitFor();
  await shot(page, 'runs');

  // Run view: timeline and tasks.
  await page.goto(`${url}/#/run/${encodeURIComponent(busy)}`);
  await page.locator(tid('task-list')).waitFor();
  await until(async () => (await page.locator(`${tid('timeline')} > li`).count()) > 20, { what: 'the timeline' });
  await page.evaluate(() => { const b = document.querySelector('.timeline-box'); b.scrollTop = b.scrollHeight; });
  await shot(page, 'run-tasks');
  const toLayout = () => page.evaluate(() => window.scrollTo(0, document.querySelector('.layout').offsetTop - 8));
  await toLayout();
  await page.evaluate(() => { const b = document.querySelector('.timeline-box'); b.scrollTop = b.scrollHeight * 0.35; });
  await shot(page, 'run-timeline');

  // Chats and calendar.
  await page.click(tid('tab-chats'));
  await toLayout();
  await shot(page, 'run-chats');
  await page.click(tid('tab-calendar'));
  await toLayout();
  await shot(page, 'run-calendar');

  // Files, with an image open when a scenario has one.
  await page.goto(`${url}/#/run/${encodeURIComponent(image || busy)}`);
  await page.locator(tid('task-list')).waitFor();
  await page.click(tid('tab-files'));
  const img = page.locator(`${tid('file-tree')} button[data-kind="image"]`).first();
  if (image && (await img.count())) {
    await img.click();
    await page.locator(tid('file-image')).waitFor();
    await page.waitForFunction(() => { const i = document.querySelector('[data-testid="file-image"]'); return i && i.complete && i.naturalWidth > 0; });
  } else {
    const txt = page.locator(`${tid('file-tree')} button[data-kind="text"]`).first();
    await txt.click();
    await page.locator(tid('file-text')).waitFor();
  }
  await page.locator(tid('file-viewer')).scrollIntoViewIfNeeded();
  await shot(page, 'run-files');

  // Play mode.
  await page.goto(`${url}/#/run/${encodeURIComponent(play)}`);
  await page.locator(`${tid('turn-view')}[data-step="2"]`).waitFor();
  await page.selectOption(tid('play-tool'), 'join_meeting');
  await page.fill(tid('arg-join_meeting-meeting'), 'meeting/standup-sync');
  await shot(page, 'play');

  // Phone width.
  await page.setViewportSize({ width: 375, height: 700 });
  await page.goto(`${url}/#/`);
  await page.locator(tid(`run-row-${busy}`)).waitFor();
  await page.locator(tid('runs-table')).scrollIntoViewIfNeeded();
  await shot(page, 'phone-runs');
  await page.goto(`${url}/#/run/${encodeURIComponent(busy)}`);
  await page.locator(tid('task-list')).waitFor();
  await shot(page, 'phone-run');

  console.log(`wrote:\n  ${written.join('\n  ')}`);
} finally {
  if (browser) await browser.close();
  await server.stop();
  rmSync(tmp, { recursive: true, force: true });
}
