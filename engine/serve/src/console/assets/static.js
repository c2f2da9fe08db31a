// The console's API answered from a static export's data files (export.rs), so
// the page works opened from disk or from any static host, with no server and no
// network request. data/index.js calls TBSIM_STATIC.index(...); a run's files are
// loaded with <script> elements when first needed: data/run-<n>.js (its worlds,
// TBSIM_STATIC.run(id, ...)), its timeline pages data/run-<n>-tl-<k>.js
// (TBSIM_STATIC.page(id, k, ...)) and its files' bytes data/run-<n>-files-<k>.js
// (TBSIM_STATIC.blobs(id, k, ...)).

'use strict';

(() => {
  let index = null;
  const runs = new Map();
  const pages = new Map();
  const blobs = new Map();
  const waiting = new Map();

  function json(status, value, extraHeaders) {
    return new Response(JSON.stringify(value), {
      status,
      headers: Object.assign({ 'Content-Type': 'application/json' }, extraHeaders || {}),
    });
  }

  function missing(code, message) {
    return json(404, { error: { code, message } });
  }

  /** Loads script `src` once; resolves with `got()` once it ran. */
  function load(src, got) {
    if (!waiting.has(src)) {
      waiting.set(src, new Promise((resolve) => {
        const s = document.createElement('script');
        s.src = src;
        s.onload = () => resolve(got());
        s.onerror = () => resolve(null);
        document.head.append(s);
      }));
    }
    return waiting.get(src);
  }

  /** Run `id`'s worlds and timeline index, loading its file once. */
  function runData(id) {
    if (runs.has(id)) return Promise.resolve(runs.get(id));
    const file = index && index.files[id];
    if (!file) return Promise.resolve(null);
    return load(`${file}.js`, () => runs.get(id) || null);
  }

  function page(id, k) {
    const key = `${id}\n${k}`;
    if (pages.has(key)) return Promise.resolve(pages.get(key));
    return load(`${index.files[id]}-tl-${k}.js`, () => pages.get(key) || null);
  }

  function blobChunk(id, k) {
    const key = `${id}\n${k}`;
    if (blobs.has(key)) return Promise.resolve(blobs.get(key));
    return load(`${index.files[id]}-files-${k}.js`, () => blobs.get(key) || null);
  }

  /** Every step's world parts, filled forward from the steps that changed them. */
  function expand(data) {
    if (data.filled) return data.filled;
    const w = data.worlds;
    const cur = {};
    data.filled = w.steps.map((s) => {
      for (const k of ['tasks', 'files', 'calendar', 'chats', 'file_bytes']) if (s[k] !== undefined) cur[k] = s[k];
      return Object.assign({ view: s.view }, cur);
    });
    return data.filled;
  }

  /** The world after `step` (the last one when absent), rebuilt from its items. */
  function world(data, step) {
    const filled = expand(data);
    const last = filled.length - 1;
    const n = step === null ? last : Math.max(0, Math.min(last, step));
    const w = filled[n];
    const items = data.worlds.items;
    const out = Object.assign({}, w.view);
    for (const k of ['tasks', 'files', 'calendar']) out[k] = (w[k] || []).map((i) => items[i]);
    out.chats = (w.chats || []).map(([meta, msgs]) => {
      const t = Object.assign({}, items[meta]);
      const log = data.worlds.logs[t.key] || [];
      t.messages = (Array.isArray(msgs) ? msgs : log.slice(0, msgs)).map((i) => items[i]);
      return t;
    });
    const files = {};
    for (const i of w.file_bytes || []) {
      const [path, chunk, at] = items[i];
      files[path] = [chunk, at];
    }
    return { view: out, files };
  }

  async function fileResponse(id, data, step, path) {
    const at = world(data, step).files[path];
    if (at === undefined) return missing('no_file', `no file \`${path}\` on the drive or in the workspace at that step`);
    const chunk = await blobChunk(id, at[0]);
    if (!chunk) return missing('unreadable_run', `the bytes of \`${path}\` did not load`);
    const [type, b64] = chunk[at[1]];
    const bin = atob(b64);
    const bytes = new Uint8Array(bin.length);
    for (let k = 0; k < bin.length; k++) bytes[k] = bin.charCodeAt(k);
    return new Response(new Blob([bytes], { type }), { status: 200, headers: { 'Content-Type': type } });
  }

  /** Timeline lines from index `from`, at most `limit` (all when null), read page by page. */
  async function timeline(id, data, from, limit) {
    const t = data.timeline;
    const starts = t.pages;
    // The page holding the first entry at or after `from`.
    let k = 0;
    while (k + 1 < starts.length && starts[k + 1] <= from) k++;
    const lines = [];
    let next = Math.max(t.next, from);
    for (; k < starts.length; k++) {
      const p = await page(id, k);
      if (!p) return null;
      for (const l of p) {
        if (l.i < from) continue;
        if (limit !== null && lines.length >= limit) {
          return { lines, next: l.i, finished: t.finished, total: t.total };
        }
        lines.push(l);
      }
    }
    return { lines, next, finished: t.finished, total: t.total };
  }

  /** Answers one API request as the server would, from the export's data. */
  async function answer(path) {
    const url = new URL(path, 'http://export.invalid/');
    const q = url.searchParams;
    const p = url.pathname;
    if (p === '/v1/console/info') return json(200, index.info);
    if (p === '/v1/console/runs') return json(200, { runs: index.runs });
    if (p === '/v1/tools') return json(200, index.tools);
    if (p === '/v1/console/compare') {
      const key = q.has('runs') ? `runs=${q.get('runs')}` : `batches=${q.get('batches') || ''}`;
      const c = index.compare[key];
      return c ? json(200, c) : missing('not_exported', 'this comparison is not in the export: it holds every pair of runs of one scenario, each scenario\'s whole group, and every pair of batches');
    }
    const m = p.match(/^\/v1\/console\/runs\/([^/]+)(\/[a-z]+)?$/);
    if (!m) return missing('not_exported', `\`${p}\` is not in a static export`);
    const id = decodeURIComponent(m[1]);
    const detail = index.details[id];
    if (!detail) return missing('unknown_run', `no run \`${id}\``);
    const sub = m[2] || '';
    if (sub === '') return json(200, detail);
    const data = await runData(id);
    if (!data) return missing('unreadable_run', `the data of run \`${id}\` did not load`);
    const step = q.has('step') ? Number(q.get('step')) : null;
    if (sub === '/timeline') {
      const from = Number(q.get('from') || 0);
      const t = await timeline(id, data, from, q.has('limit') ? Number(q.get('limit')) : null);
      return t ? json(200, t) : missing('unreadable_run', `a timeline page of run \`${id}\` did not load`);
    }
    if (sub === '/world') return json(200, world(data, step).view);
    if (sub === '/file') return fileResponse(id, data, step, q.get('path') || '');
    if (sub === '/messages') return data.messages ? json(200, { messages: data.messages }) : json(200, { messages: [] });
    return json(409, { error: { code: 'read_only', message: 'a static export shows recorded runs only' } });
  }

  window.TBSIM_STATIC = {
    index(v) {
      index = v;
    },
    run(id, v) {
      runs.set(id, v);
    },
    page(id, k, v) {
      pages.set(`${id}\n${k}`, v);
    },
    blobs(id, k, v) {
      blobs.set(`${id}\n${k}`, v);
    },
    /** A Response for `path`, as fetch() would give it from the server. */
    fetch(path) {
      return answer(path);
    },
  };
})();
