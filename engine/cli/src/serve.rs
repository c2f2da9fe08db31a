//! `tbsim serve`: the HTTP session API (`tbsim_serve::http`) on a socket.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result, bail};

use tbsim_serve::http::{ApiState, serve_with};
use tbsim_serve::registry::{Registry, RegistryConfig};

use crate::args::ServeArgs;

/// The agents' token's variable (read when neither --token nor --token-file is given).
pub(crate) const TOKEN_ENV: &str = "TBSIM_SERVE_TOKEN";
/// The console token's variable.
pub(crate) const CONSOLE_TOKEN_ENV: &str = "TBSIM_SERVE_CONSOLE_TOKEN";
/// Largest token file read.
const MAX_TOKEN_FILE: u64 = 4096;

/// A token from its flag, its file or its environment variable, in that order.
fn token_from(
    flag: Option<&str>,
    file: Option<&Path>,
    var: &str,
    what: &str,
) -> Result<Option<String>> {
    let token = match (flag, file) {
        (Some(t), _) => Some(t.to_owned()),
        (None, Some(path)) => Some(read_token_file(path, what)?),
        (None, None) => match std::env::var(var) {
            Ok(t) => Some(t),
            Err(std::env::VarError::NotPresent) => None,
            Err(std::env::VarError::NotUnicode(_)) => bail!("${var} is not valid UTF-8"),
        },
    };
    Ok(token)
}

/// The first line of a token file: a regular file of at most 4 KiB (a FIFO or a
/// device would hang or flood the read).
fn read_token_file(path: &Path, what: &str) -> Result<String> {
    let meta = std::fs::metadata(path)
        .with_context(|| format!("cannot read {what} file `{}`", path.display()))?;
    if !meta.is_file() {
        bail!("{what} file `{}` is not a regular file", path.display());
    }
    if meta.len() > MAX_TOKEN_FILE {
        bail!(
            "{what} file `{}` is larger than {MAX_TOKEN_FILE} bytes",
            path.display()
        );
    }
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read {what} file `{}`", path.display()))?;
    let line = text.lines().next().unwrap_or("").trim_end_matches('\r');
    if line.is_empty() {
        bail!("{what} file `{}` is empty", path.display());
    }
    Ok(line.to_owned())
}

pub(crate) fn cmd_serve(args: ServeArgs) -> Result<ExitCode> {
    // Removed however the server ends (an error included).
    let _owned = args.remove_on_exit.clone().map(RemoveOnDrop);
    let token = token_from(
        args.token.as_deref(),
        args.token_file.as_deref(),
        TOKEN_ENV,
        "--token",
    )?;
    let console_token = token_from(
        args.console_token.as_deref(),
        args.console_token_file.as_deref(),
        CONSOLE_TOKEN_ENV,
        "--console-token",
    )?;
    match &token {
        Some(t) if t.is_empty() => {
            bail!("the token (--token, --token-file, ${TOKEN_ENV}) must not be empty")
        }
        _ if console_token.as_deref() == Some("") => {
            bail!("the console token must not be empty")
        }
        Some(t) if console_token.as_ref() == Some(t) => bail!(
            "--console-token must differ from --token: agents hold --token, and the console can start the oracle"
        ),
        None if !args.bind.ip().is_loopback() => bail!(
            "refusing to listen on {} without a token: anyone who can reach it could run \
             sessions; give one with --token-file PATH or ${TOKEN_ENV}, or bind a loopback \
             address (127.0.0.1, ::1)",
            args.bind
        ),
        _ => {}
    }
    // Script families being written: their instances are one more scenario root,
    // kept current by a watcher for the server's life.
    let instances = crate::family_serve::Instances::start(&args.families)?;
    let more: Vec<std::path::PathBuf> = instances.iter().map(|i| i.dir().to_path_buf()).collect();
    let roots = crate::content::roots_with(args.scenarios.as_deref(), &more)?;
    if roots.is_empty() {
        bail!(
            "no scenarios to serve: no bundled content found beside the binary; pass --scenarios DIR or set TBSIM_CONTENT"
        );
    }
    std::fs::create_dir_all(&args.out)
        .with_context(|| format!("cannot create `{}`", args.out.display()))?;
    let view_cache = crate::console::run_view_cache(args.view_cache.as_deref(), args.no_view_cache);
    let registry = Arc::new(Registry::new(RegistryConfig {
        roots,
        out: args.out.clone(),
        max_sessions: usize::try_from(args.max_sessions).unwrap_or(usize::MAX),
        idle_timeout: Duration::from_secs(args.idle_timeout),
        unused_timeout: args.unused_timeout,
        keep_finished: args.keep_finished,
        view_cache: view_cache
            .clone()
            .map(tbsim_serve::console::worlds::prime_hook),
    }));
    let agents = Arc::new(crate::console::ConsoleAgents::new(
        args.api_config.as_deref(),
    )?);
    let mut console = tbsim_serve::console::Console::new(
        tbsim_serve::console::Mode::Serve,
        Arc::clone(&registry),
        Vec::new(),
        agents.clone(),
    );
    if let Some(cache) = view_cache {
        console = console.with_view_cache(cache);
    }
    let console = Arc::new(console);
    // Connections hold descriptors: the soft limit goes up to the hard one, and the
    // connection cap stays under it.
    let fds = tbsim_serve::conn::raise_fd_limit();
    let mut api = ApiState::new(registry, token, console_token);
    api.allowed_hosts = args.conn.allow_host.clone();
    api.limits = args.conn.limits(fds);
    let api = Arc::new(api);
    // Every live session parks one blocking thread (its run) for its whole life, so
    // the pool must hold `--max-sessions` of them plus room for file writes; tokio's
    // default of 512 would make the 513th session hang instead of getting its 429.
    let blocking = usize::try_from(args.max_sessions)
        .unwrap_or(usize::MAX)
        .saturating_add(64);
    let mut builder = tokio::runtime::Builder::new_multi_thread();
    if let Some(n) = args.workers {
        builder.worker_threads(usize::try_from(n).unwrap_or(1));
    }
    let runtime = builder
        .thread_name("tbsim-serve")
        .max_blocking_threads(blocking)
        .enable_all()
        .build()
        .context("cannot start the async runtime")?;
    runtime.block_on(async {
        catch_file_size_signal();
        let listener = tokio::net::TcpListener::bind(args.bind)
            .await
            .with_context(|| format!("cannot listen on {}", args.bind))?;
        let addr = listener.local_addr()?;
        // Tests and scripts read the address (the port, with --bind ...:0) from here.
        println!("tbsim serve: listening on http://{addr}");
        // On stderr: scripts read only the line above from stdout, and may close it.
        eprintln!("console: http://{addr}/");
        std::io::stdout().flush()?;
        eprintln!(
            "sessions write their runs under {}; stop with Ctrl-C or SIGTERM (open sessions are closed and written)",
            args.out.display()
        );
        let lifeline = args.exit_with_parent.then(stdin_closed);
        let shutdown = async move {
            match lifeline {
                Some(closed) => tokio::select! {
                    () = crate::console::stop_signal() => {}
                    _ = closed => {}
                },
                None => crate::console::stop_signal().await,
            }
        };
        serve_with(
            listener,
            api,
            args.max_body,
            Some(tbsim_serve::console::routes::router(console)),
            shutdown,
        ).await?;
        anyhow::Ok(())
    })?;
    // The agents' model runtime (if any) is dropped here, outside the server's.
    drop(runtime);
    drop(agents);
    Ok(ExitCode::SUCCESS)
}

/// Resolves once standard input reaches its end (or fails): the parent holding
/// the pipe closed it or died.
fn stdin_closed() -> tokio::sync::oneshot::Receiver<()> {
    let (tx, rx) = tokio::sync::oneshot::channel();
    let spawned = std::thread::Builder::new()
        .name("tbsim-lifeline".into())
        .spawn(move || {
            let mut buf = [0u8; 512];
            let mut stdin = std::io::stdin().lock();
            loop {
                match std::io::Read::read(&mut stdin, &mut buf) {
                    Ok(0) => break,
                    Ok(_) => {}
                    Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                    Err(_) => break,
                }
            }
            let _ = tx.send(());
        });
    // Without the thread the sender is dropped, and the receiver resolves at once:
    // a server that cannot watch its parent stops rather than outlive it.
    drop(spawned);
    rx
}

/// A directory removed (with its contents) when dropped.
struct RemoveOnDrop(PathBuf);

impl Drop for RemoveOnDrop {
    fn drop(&mut self) {
        if let Err(e) = std::fs::remove_dir_all(&self.0)
            && e.kind() != std::io::ErrorKind::NotFound
        {
            eprintln!("tbsim serve: cannot remove `{}`: {e}", self.0.display());
        }
    }
}

/// Under a file-size limit (`ulimit -f`), a write past it raises SIGXFSZ, whose
/// default action kills the process: every session would die with the one whose
/// run hit the limit. Caught, the write fails with EFBIG instead, and that run ends
/// with a trajectory write error (as on a full disk) while the others go on.
fn catch_file_size_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        // Once registered, tokio's handler stays for the life of the process; the
        // stream itself is not needed.
        let _ = signal(SignalKind::from_raw(libc::SIGXFSZ));
    }
}
