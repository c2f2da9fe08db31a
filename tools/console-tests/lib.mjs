// Shared helpers of the console's browser tests and screenshots: the tbsim binary,
// servers it starts on a free loopback port, a headless Chromium, small waits.

import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

import { chromium } from 'playwright-core';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * The tbsim binary: $TBSIM_BIN, else the newer of target/release/tbsim and
 * target/debug/tbsim.
 */
export function tbsimBin() {
  if (process.env.TBSIM_BIN) return resolve(process.env.TBSIM_BIN);
  const found = ['target/release/tbsim', 'target/debug/tbsim']
    .map((p) => join(ROOT, p))
    .filter((f) => existsSync(f))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  if (found.length) return found[0];
  throw new Error('no tbsim binary: set TBSIM_BIN or run `cargo build -p tbsim`');
}

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A fresh temporary directory, removed by the returned cleanup. */
export function tempDir(prefix = 'tbsim-console-') {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** Runs tbsim to completion; returns {status, stdout, stderr}. */
export function tbsimSync(args, opts = {}) {
  const r = spawnSync(tbsimBin(), args, { cwd: ROOT, encoding: 'utf8', timeout: 120_000, ...opts });
  return { status: r.status, stdout: r.stdout || '', stderr: r.stderr || '', error: r.error };
}

const URL_RE = /(https?:\/\/(?:127\.0\.0\.1|localhost|\[::1\]|[0-9.]+):\d+)\/?/;

/**
 * Starts a tbsim command that serves the console (`serve`, `view`, `run --ui`) and
 * waits for the URL it prints (on stdout or stderr). Returns {url, proc, output(),
 * stop()}.
 */
export async function startTbsim(args, { timeoutMs = 30_000 } = {}) {
  const proc = spawn(tbsimBin(), args, { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  const url = await new Promise((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`no URL from tbsim ${args.join(' ')} within ${timeoutMs} ms; output:\n${out}`)), timeoutMs);
    const onData = (chunk) => {
      out += chunk.toString();
      for (const line of out.split('\n')) {
        if (!/listening on|console:|http:\/\//.test(line)) continue;
        const m = line.match(URL_RE);
        if (m) {
          clearTimeout(timer);
          res(m[1]);
          return;
        }
      }
    };
    proc.stdout.on('data', onData);
    proc.stderr.on('data', onData);
    proc.on('exit', (code) => {
      clearTimeout(timer);
      rej(new Error(`tbsim ${args.join(' ')} exited (${code}) before printing a URL; output:\n${out}`));
    });
  });
  proc.stdout.on('data', (c) => { out += c.toString(); });
  proc.stderr.on('data', (c) => { out += c.toString(); });
  return {
    url,
    proc,
    output: () => out,
    async stop() {
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const gone = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 3000);
      await gone;
      clearTimeout(t);
    },
  };
}

/** `tbsim serve` on a free port writing runs under `out`. */
export function startServe(out, extra = []) {
  return startTbsim(['serve', '--bind', '127.0.0.1:0', '--out', out, ...extra]);
}

/** `tbsim view` of run directories on a free port, forks under `out`. */
export function startView(dirs, out, extra = [], opts = {}) {
  return startTbsim(['view', ...dirs, '--bind', '127.0.0.1:0', '--out', out, ...extra], opts);
}

/** A headless Chromium with a fresh profile. Returns {context, page, close()}. */
export async function launch({ width = 1280, height = 800 } = {}) {
  const profile = tempDir('tbsim-chromium-');
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
    headless: true,
    args: CHROMIUM_ARGS,
    viewport: { width, height },
  });
  const page = context.pages()[0] || (await context.newPage());
  const errors = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('console', (m) => {
    if (m.type() === 'error' && !/Failed to load resource|EventSource/.test(m.text())) errors.push(m.text());
  });
  return {
    context,
    page,
    errors,
    async close() {
      await context.close().catch(() => {});
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

/** JSON from the server (throws with the body on an error status). */
export async function api(base, path, { method = 'GET', body } = {}) {
  const res = await fetch(base + path, {
    method,
    // Console POSTs must say they come from the console (the page sends this too).
    headers: Object.assign(body !== undefined ? { 'Content-Type': 'application/json' } : {}, method !== 'GET' ? { 'X-Tbsim-Console': '1' } : {}),
    body: body !== undefined ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

/** Polls `fn` until it returns a truthy value. */
export async function until(fn, { timeoutMs = 30_000, every = 100, what = 'a condition' } = {}) {
  const end = Date.now() + timeoutMs;
  let last;
  for (;;) {
    try {
      last = await fn();
      if (last) return last;
    } catch (e) {
      last = e;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what} (last: ${last instanceof Error ? last.message : JSON.stringify(last)})`);
    await new Promise((r) => setTimeout(r, every));
  }
}

/** Lines of a JSON-lines file, parsed. */
export function jsonLines(file) {
  return readFileSync(file, 'utf8').split('\n').filter((l) => l.trim()).map((l) => JSON.parse(l));
}

export function readJson(file) {
  return JSON.parse(readFileSync(file, 'utf8'));
}

/** The run directory of a console run: `<out>/<dir_name>` (RunDetail), else `<out>/<id>`. */
export function runDir(out, detail) {
  return join(out, detail.dir_name || detail.id);
}

/** The id in `#/run/<id>`. */
export function runIdOf(page) {
  const m = new URL(page.url()).hash.match(/^#\/run\/([^/?]+)/);
  return m ? decodeURIComponent(m[1]) : null;
}

/** A `[data-testid="…"]` selector (ids may hold `/`). */
export const tid = (id) => `[data-testid="${id.replace(/"/g, '\\"')}"]`;

/** Whether the page scrolls sideways. */
export async function overflow(page) {
  return page.evaluate(() => ({
    scrollWidth: document.scrollingElement.scrollWidth,
    innerWidth: window.innerWidth,
  }));
}

/** The oracle's run of `scenario` into `out` (`tbsim run`), asserted to succeed. */
export function oracleRun(scenario, out) {
  const r = tbsimSync(['run', join('content/scenarios', `${scenario}.ron`), '--agent', 'oracle', '--out', out]);
  if (r.status !== 0) throw new Error(`tbsim run ${scenario} failed (${r.status}):\n${r.stderr}${r.error || ''}`);
  return out;
}
