// The console's API answered from a static export's data files (export.rs), so
// the page works opened from disk or from any static host, with no server and no
// network request. data/index.js calls TBSIM_STATIC.index(...); a run's file,
// data/run-<n>.js, is loaded with a <script> element when the run is first asked
// for and calls TBSIM_STATIC.run(id, ...).

'use strict';

(() => {
  let index = null;
  const runs = new Map();
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

  /** Run `id`'s data, loading its file once. */
  function runData(id) {
    if (runs.has(id)) return Promise.resolve(runs.get(id));
    const file = index && index.files[id];
    if (!file) return Promise.resolve(null);
    if (!waiting.has(id)) {
      waiting.set(id, new Promise((resolve) => {
        const s = document.createElement('script');
        s.src = file;
        s.onload = () => resolve(runs.get(id) || null);
        s.onerror = () => resolve(null);
        document.head.append(s);
      }));
    }
    return waiting.get(id);
  }

  /** The world after `step` (the last one when absent), rebuilt from its parts. */
  function world(data, step) {
    const last = data.worlds.length - 1;
    const n = step === null ? last : Math.max(0, Math.min(last, step));
    const w = data.worlds[n];
    const out = Object.assign({}, w.view);
    for (const [k, i] of Object.entries(w.refs)) {
      if (k !== 'file_bytes') out[k] = data.parts[i];
    }
    return { view: out, files: data.parts[w.refs.file_bytes] || {} };
  }

  function fileResponse(data, step, path) {
    const i = world(data, step).files[path];
    if (i === undefined) return missing('no_file', `no file \`${path}\` on the drive or in the workspace at that step`);
    const [type, b64] = data.blobs[i];
    const bin = atob(b64);
    const bytes = new Uint8Array(bin.length);
    for (let k = 0; k < bin.length; k++) bytes[k] = bin.charCodeAt(k);
    return new Response(new Blob([bytes], { type }), { status: 200, headers: { 'Content-Type': type } });
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
      const t = data.timeline;
      return json(200, { lines: t.lines.filter((l) => l.i >= from), next: Math.max(t.next, from), finished: t.finished });
    }
    if (sub === '/world') return json(200, world(data, step).view);
    if (sub === '/file') return fileResponse(data, step, q.get('path') || '');
    return json(409, { error: { code: 'read_only', message: 'a static export shows recorded runs only' } });
  }

  window.TBSIM_STATIC = {
    index(v) {
      index = v;
    },
    run(id, v) {
      runs.set(id, v);
    },
    /** A Response for `path`, as fetch() would give it from the server. */
    fetch(path) {
      return answer(path);
    },
  };
})();
