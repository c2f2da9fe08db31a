// The console's first requests, started by this small script in the page's head
// before app.js (130 kB) has arrived and been compiled: the first paint of the runs
// list or of a run waits for them, and asked from app.js they began 50-70 ms
// after the page's own response. The server puts it inline in the page (routes.rs,
// `page`; the page's CSP allows it by its hash), so they start as the page is
// parsed, not after one more round trip. app.js takes each answer once (`requestEarly`);
// the paths must be those app.js asks (its TIMELINE_FIRST_PAGE is 40 here too).

'use strict';

(() => {
  const hash = location.hash || '';
  let token = '';
  try {
    token = new URLSearchParams(location.search).get('token') || sessionStorage.getItem('tbsim.token') || '';
  } catch {
    token = new URLSearchParams(location.search).get('token') || '';
  }
  // What every page asks first (the console's mode), then what its address shows.
  const paths = ['/v1/console/info'];
  if (!/^#\/(run|compare|play)/.test(hash)) {
    paths.push('/v1/console/runs');
  } else {
    const m = hash.match(/^#\/run\/([^/?]+)(?:\/step\/(\d+))?/);
    let base = null;
    try {
      base = m ? `/v1/console/runs/${encodeURIComponent(decodeURIComponent(m[1]))}` : null;
    } catch {
      base = null; // not an id: the route says so
    }
    if (base) {
      paths.push(base, `${base}/timeline?from=0&limit=40`,
        m[2] !== undefined ? `${base}/world?step=${Math.max(0, Number(m[2]))}` : `${base}/world`, '/v1/tools');
    }
  }
  const started = new Map();
  for (const p of paths) {
    const res = fetch(p, { headers: token ? { Authorization: `Bearer ${token}` } : {} });
    res.catch(() => {}); // app.js's own request shows any error
    started.set(p, res);
  }
  window.tbsimEarly = started;
})();
