//! Connections: the accept loop of every server (`tbsim serve`, `tbsim view`,
//! `tbsim run --ui`) and the limits that keep one client from holding the server.
//!
//! * A request's head must arrive within [`Limits::header_timeout`]; a kept-alive
//!   connection waiting for its next request is held to the same bound (hyper
//!   starts the clock whenever it waits for a head), so idle and header-trickling
//!   connections are closed.
//! * A request's body must arrive within [`Limits::body_timeout`] (a trickled body
//!   is cut off and the request fails).
//! * At most [`Limits::max_connections`] connections are served at once; one more is
//!   answered `503` and closed at once, so the server never runs out of file
//!   descriptors (its run files need some too). [`raise_fd_limit`] lifts the soft
//!   open-files limit to the hard one at start.
//! * Event streams (the console's live views, MCP's standalone stream) are capped
//!   per client address and in total ([`StreamSlots`]): a `429` past either.

use std::collections::BTreeMap;
use std::future::Future;
use std::net::{IpAddr, Ipv4Addr};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use axum::Router;
use axum::body::Body;
use futures_util::StreamExt as _;
use hyper_util::rt::{TokioIo, TokioTimer};
use tokio::net::TcpListener;

/// A server's connection and stream limits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limits {
    /// How long a request's head may take to arrive, and how long a kept-alive
    /// connection may wait for its next request.
    pub header_timeout: Duration,
    /// How long a request's body may take to arrive.
    pub body_timeout: Duration,
    /// Connections served at once.
    pub max_connections: usize,
    /// Event streams open at once, all clients together.
    pub max_streams: usize,
    /// Event streams open at once from one client address.
    pub max_streams_per_client: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            header_timeout: Duration::from_secs(10),
            body_timeout: Duration::from_secs(60),
            max_connections: 512,
            max_streams: 64,
            max_streams_per_client: 16,
        }
    }
}

/// How long connections get to finish at shutdown before they are dropped (an
/// event stream never finishes on its own).
const GRACE: Duration = Duration::from_secs(5);

/// File descriptors kept for everything but connections: run files, the
/// scenario roots, the blocking pool's work.
const FD_RESERVE: u64 = 256;

/// Raises the soft open-files limit to the hard one (a no-op where there is no
/// such limit) and returns the soft limit now in force, if known.
pub fn raise_fd_limit() -> Option<u64> {
    if !rlimit::Resource::NOFILE.is_supported() {
        return None;
    }
    let (soft, hard) = rlimit::Resource::NOFILE.get().ok()?;
    if soft < hard && rlimit::Resource::NOFILE.set(hard, hard).is_ok() {
        return Some(hard);
    }
    Some(soft)
}

/// The connection cap `wanted`, lowered so that connections and their run files fit
/// under the open-files limit `fds` (when known).
pub fn connection_cap(wanted: usize, fds: Option<u64>) -> usize {
    match fds {
        Some(n) => {
            let room = n.saturating_sub(FD_RESERVE) / 2;
            wanted
                .min(usize::try_from(room).unwrap_or(usize::MAX))
                .max(1)
        }
        None => wanted.max(1),
    }
}

/// Open event streams, by client address and in total.
#[derive(Debug, Default)]
pub struct StreamSlots {
    open: Mutex<BTreeMap<IpAddr, usize>>,
}

/// One open event stream; its slot is given back when dropped.
#[derive(Debug)]
pub struct StreamSlot {
    slots: Arc<StreamSlots>,
    client: IpAddr,
}

impl StreamSlots {
    /// A slot for a stream of `client`, or `None` when the client or the server
    /// is at its cap.
    pub fn take(self: &Arc<Self>, client: IpAddr, limits: &Limits) -> Option<StreamSlot> {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let total: usize = open.values().sum();
        let mine = open.get(&client).copied().unwrap_or(0);
        if total >= limits.max_streams || mine >= limits.max_streams_per_client {
            return None;
        }
        open.insert(client, mine + 1);
        Some(StreamSlot {
            slots: Arc::clone(self),
            client,
        })
    }

    /// Streams open now.
    pub fn open(&self) -> usize {
        self.open
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .values()
            .sum()
    }
}

impl Drop for StreamSlot {
    fn drop(&mut self) {
        let mut open = self
            .slots
            .open
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        if let Some(n) = open.get_mut(&self.client) {
            *n -= 1;
            if *n == 0 {
                open.remove(&self.client);
            }
        }
    }
}

/// The client address a request came from (all requests without one count as one
/// client).
pub(crate) fn client_of(req: &axum::extract::Request) -> IpAddr {
    req.extensions()
        .get::<ConnAddrs>()
        .map_or(IpAddr::V4(Ipv4Addr::UNSPECIFIED), |c| c.peer.ip())
}

/// `body` holding `slot` until the body is dropped (the stream ends or the client
/// goes away).
pub(crate) fn hold(body: Body, slot: StreamSlot) -> Body {
    Body::from_stream(body.into_data_stream().map(move |chunk| {
        let _held = &slot;
        chunk
    }))
}

/// `body`, failing once `within` has passed before its end arrived.
pub(crate) fn with_deadline(body: Body, within: Duration) -> Body {
    let deadline = tokio::time::Instant::now() + within;
    let chunks = futures_util::stream::unfold(Some(body.into_data_stream()), move |s| async move {
        let mut s = s?;
        match tokio::time::timeout_at(deadline, s.next()).await {
            Ok(Some(chunk)) => Some((chunk, Some(s))),
            Ok(None) => None,
            Err(_) => Some((
                Err(axum::Error::new(std::io::Error::new(
                    std::io::ErrorKind::TimedOut,
                    "the request body did not arrive in time",
                ))),
                None,
            )),
        }
    });
    Body::from_stream(chunks)
}

/// Serves `app` on `listener` under `limits` until `shutdown` resolves; then lets
/// connections finish for a few seconds and drops the rest.
pub async fn serve_connections(
    listener: TcpListener,
    app: Router,
    limits: &Limits,
    shutdown: impl Future<Output = ()> + Send + 'static,
) -> std::io::Result<()> {
    let slots = Arc::new(tokio::sync::Semaphore::new(limits.max_connections.max(1)));
    let (stop_tx, stop_rx) = tokio::sync::watch::channel(false);
    let mut conns = tokio::task::JoinSet::new();
    let header_timeout = limits.header_timeout;
    tokio::pin!(shutdown);
    loop {
        let accepted = tokio::select! {
            () = &mut shutdown => break,
            r = listener.accept() => r,
        };
        // Reap finished connections' tasks as we go.
        while conns.try_join_next().is_some() {}
        let (stream, peer) = match accepted {
            Ok(a) => a,
            Err(_) => {
                // Out of descriptors (or a connection reset before it was taken):
                // wait for some to be given back rather than spin.
                tokio::time::sleep(Duration::from_millis(50)).await;
                continue;
            }
        };
        let Ok(permit) = Arc::clone(&slots).try_acquire_owned() else {
            // Over the cap: say so if the socket takes it now, and close.
            let _ = stream.try_write(
                b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\nRetry-After: 1\r\n\r\n",
            );
            drop(stream);
            continue;
        };
        let local = match stream.local_addr() {
            Ok(l) => l,
            Err(_) => continue,
        };
        let addrs = ConnAddrs { local, peer };
        let app = app.clone();
        let mut stop = stop_rx.clone();
        conns.spawn(async move {
            let _permit = permit;
            let service = hyper::service::service_fn(
                move |mut req: hyper::Request<hyper::body::Incoming>| {
                    req.extensions_mut().insert(addrs);
                    tower_service::Service::call(&mut app.clone(), req.map(Body::new))
                },
            );
            let conn = hyper::server::conn::http1::Builder::new()
                .timer(TokioTimer::new())
                .header_read_timeout(header_timeout)
                .serve_connection(TokioIo::new(stream), service);
            tokio::pin!(conn);
            let stopped = async move {
                // The guard `wait_for` returns is not `Send`: drop it at once.
                let _ = stop.wait_for(|s| *s).await.map(|_| ());
            };
            tokio::select! {
                _ = conn.as_mut() => {}
                () = stopped => {
                    conn.as_mut().graceful_shutdown();
                    let _ = tokio::time::timeout(GRACE, conn).await;
                }
            }
        });
    }
    let _ = stop_tx.send(true);
    let drained = tokio::time::timeout(GRACE + Duration::from_secs(1), async {
        while conns.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        conns.abort_all();
    }
    Ok(())
}

/// The addresses of the connection a request came in on (set by the accept loop
/// [`serve_connections`]; absent when the router is driven some other way).
#[derive(Debug, Clone, Copy)]
pub struct ConnAddrs {
    /// The server's end: the address the client connected to.
    pub local: std::net::SocketAddr,
    /// The client's end.
    pub peer: std::net::SocketAddr,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_slots_cap_each_client_and_the_total() {
        let limits = Limits {
            max_streams: 3,
            max_streams_per_client: 2,
            ..Limits::default()
        };
        let slots = Arc::new(StreamSlots::default());
        let a: IpAddr = "10.0.0.1".parse().unwrap();
        let b: IpAddr = "10.0.0.2".parse().unwrap();
        let a1 = slots.take(a, &limits).unwrap();
        let _a2 = slots.take(a, &limits).unwrap();
        assert!(slots.take(a, &limits).is_none(), "a third of one client's");
        let _b1 = slots.take(b, &limits).unwrap();
        assert!(slots.take(b, &limits).is_none(), "past the total");
        drop(a1);
        assert_eq!(slots.open(), 2);
        assert!(slots.take(b, &limits).is_some());
    }

    #[test]
    fn the_connection_cap_fits_under_the_descriptor_limit() {
        assert_eq!(connection_cap(512, Some(1024)), 384);
        assert_eq!(connection_cap(512, Some(1 << 20)), 512);
        assert_eq!(connection_cap(512, Some(10)), 1);
        assert_eq!(connection_cap(512, None), 512);
    }
}
