//! The family-script host as a child process under limits the kernel enforces.
//!
//! A family script from a folder is untrusted code: it runs in `tbsim-script`,
//! never in tbsim's process, and that process is bounded so that nothing it does
//! can take tbsim down or hold it:
//!
//! - **memory**: `RLIMIT_AS` on the child (set by tbsim with `prlimit` before the
//!   first request is written, so no script runs unbounded; the host sizes its
//!   serving stack only once that request has arrived, so from the limit). The host is one
//!   process that cannot fork, map shared memory or write files, so its address
//!   space bounds everything it can hold; a cgroup would add nothing here.
//!   An allocation past the limit fails, the host aborts, and tbsim reads why.
//! - **time**: a wall-clock deadline per request. The host stops a script itself
//!   at the deadline (checked every 1,000 ticks, naming the line); tbsim kills a
//!   host that is still silent a grace period later (one long operation, such as
//!   scanning a 50 MB string, between two checks).
//! - **CPU**: `RLIMIT_CPU` as a backstop for a host whose tbsim is gone (it also
//!   gets a parent-death signal); a host is retired before it nears it.
//! - **answers**: read with a size cap; a longer line kills the host.
//! - **files and cores**: `RLIMIT_FSIZE` 0 and `RLIMIT_CORE` 0.
//!
//! When a host dies or is killed, the error names the script being evaluated,
//! what it was doing, the bound it crossed and the statement it was at (from the
//! host's last words on standard error and how it ended: see `tbsim-script`'s
//! `position` module); the host is dropped and the next request starts a fresh one.
//!
//! The bounds can be set for a process with `TBSIM_SCRIPT_DEADLINE_MS` (per
//! request, default 10,000), `TBSIM_SCRIPT_MEMORY_MB` (address space, default
//! 1,536) and `TBSIM_SCRIPT_ANSWER_MB` (default 64). Tests use a short deadline.

use std::io::{Read, Write};
use std::os::unix::process::ExitStatusExt;
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::OnceLock;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crate::script_error::ScriptError;
// How the host reports the statement a script was at: when an allocation is
// refused, once a request's deadline has passed, and through a traced request.
use tbsim_core::script_error::POSITION_PREFIX;

/// The bounds every host program runs under.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Bounds {
    /// Wall-clock time per request, as the host itself enforces it.
    pub deadline: Duration,
    /// How much longer tbsim waits before it kills the host.
    pub grace: Duration,
    /// The host's address space, bytes.
    pub memory: u64,
    /// The host's CPU seconds over its life (a backstop; hosts retire at half).
    pub cpu_seconds: u64,
    /// The longest answer line, bytes.
    pub answer: usize,
}

fn env_u64(name: &str) -> Option<u64> {
    std::env::var(name)
        .ok()
        .and_then(|v| v.trim().parse::<u64>().ok())
        .filter(|&v| v > 0)
}

/// The bounds of this process's hosts (read from the environment once).
pub fn bounds() -> &'static Bounds {
    static B: OnceLock<Bounds> = OnceLock::new();
    B.get_or_init(|| {
        let deadline = Duration::from_millis(env_u64("TBSIM_SCRIPT_DEADLINE_MS").unwrap_or(10_000));
        Bounds {
            deadline,
            grace: (deadline / 2).max(Duration::from_secs(1)),
            memory: env_u64("TBSIM_SCRIPT_MEMORY_MB").unwrap_or(1_536) << 20,
            cpu_seconds: 600,
            answer: usize::try_from(env_u64("TBSIM_SCRIPT_ANSWER_MB").unwrap_or(64) << 20)
                .unwrap_or(usize::MAX),
        }
    })
}

/// What a request asks, for errors: the script it evaluates and the operation.
#[derive(Debug, Clone, Copy)]
pub struct Doing<'a> {
    /// The script's path as given (`<host>` for requests of no script).
    pub file: &'a str,
    /// The operation (`load`, `generate`, …).
    pub op: &'a str,
}

/// A running host program and the pipes to it.
#[derive(Debug)]
pub struct HostProcess {
    child: Child,
    stdin: ChildStdin,
    stdout: ChildStdout,
    buf: Vec<u8>,
    /// How far `buf` is known to hold no newline.
    scanned: usize,
    stderr: Option<JoinHandle<Vec<u8>>>,
    /// Wall time spent answering, a bound on the CPU the host has used.
    busy: Duration,
}

/// The last bytes of the host's standard error kept for a diagnosis.
const STDERR_KEPT: usize = 8 << 10;

impl HostProcess {
    /// Starts `program` and puts it under [`bounds`] before anything is sent.
    pub fn start(program: &Path) -> Result<HostProcess, ScriptError> {
        let mut child = spawn(program).map_err(|e| {
            ScriptError::at_file(
                "<host>",
                format!(
                    "cannot start the family-script host {}: {e}",
                    program.display()
                ),
            )
        })?;
        let (Some(stdin), Some(stdout), Some(mut err)) =
            (child.stdin.take(), child.stdout.take(), child.stderr.take())
        else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(ScriptError::at_file(
                "<host>",
                "the host's pipes were not opened",
            ));
        };
        if let Err(e) = limit(&child) {
            let _ = child.kill();
            let _ = child.wait();
            return Err(ScriptError::at_file(
                "<host>",
                format!("cannot put the family-script host under its limits: {e}"),
            ));
        }
        let stderr = std::thread::Builder::new()
            .name("tbsim-script-stderr".into())
            .stack_size(64 << 10)
            .spawn(move || {
                let mut kept = Vec::new();
                let mut chunk = [0u8; 4096];
                while let Ok(n) = err.read(&mut chunk) {
                    if n == 0 {
                        break;
                    }
                    kept.extend_from_slice(&chunk[..n]);
                    if kept.len() > 2 * STDERR_KEPT {
                        kept.drain(..kept.len() - STDERR_KEPT);
                    }
                }
                kept
            })
            .ok();
        Ok(HostProcess {
            child,
            stdin,
            stdout,
            buf: Vec::new(),
            scanned: 0,
            stderr,
            busy: Duration::ZERO,
        })
    }

    /// Whether the host has worked long enough to retire (before its CPU limit).
    pub fn worn(&self) -> bool {
        self.busy.as_secs() * 2 >= bounds().cpu_seconds
    }

    /// Writes one request line and reads the answer line, within the deadline
    /// and the size cap. On any failure the host is killed and the error says
    /// why, naming `doing`'s script; the host must then be dropped.
    pub fn exchange(&mut self, line: &str, doing: Doing<'_>) -> Result<String, ScriptError> {
        let b = bounds();
        let started = Instant::now();
        let sent = self
            .stdin
            .write_all(line.as_bytes())
            .and_then(|()| self.stdin.write_all(b"\n"))
            .and_then(|()| self.stdin.flush());
        let read = match sent {
            Ok(()) => self.read_line(started + b.deadline + b.grace, b.answer),
            Err(e) => Err(Stop::Io(e)),
        };
        self.busy += started.elapsed();
        read.map_err(|stop| self.fail(stop, doing))
    }

    fn read_line(&mut self, deadline: Instant, cap: usize) -> Result<String, Stop> {
        use rustix::event::{PollFd, PollFlags, Timespec, poll};
        let mut chunk = vec![0u8; 1 << 16];
        loop {
            if let Some(i) = self.buf[self.scanned..].iter().position(|&b| b == b'\n') {
                let end = self.scanned + i;
                let mut line: Vec<u8> = self.buf.drain(..=end).collect();
                line.pop();
                self.scanned = 0;
                return String::from_utf8(line).map_err(|_| Stop::NotText);
            }
            self.scanned = self.buf.len();
            if self.buf.len() > cap {
                return Err(Stop::TooLarge(cap));
            }
            let now = Instant::now();
            if now >= deadline {
                return Err(Stop::Deadline);
            }
            let left = deadline - now;
            let timeout = Timespec {
                tv_sec: i64::try_from(left.as_secs()).unwrap_or(i64::MAX),
                tv_nsec: i64::from(left.subsec_nanos()),
            };
            let mut fds = [PollFd::new(&self.stdout, PollFlags::IN)];
            match poll(&mut fds, Some(&timeout)) {
                Ok(0) => continue,
                Ok(_) => {}
                Err(rustix::io::Errno::INTR) => continue,
                Err(e) => return Err(Stop::Io(e.into())),
            }
            match self.stdout.read(&mut chunk) {
                Ok(0) => return Err(Stop::Ended),
                Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(Stop::Io(e)),
            }
        }
    }

    /// Kills the host (if it still runs), and says why it stopped answering.
    fn fail(&mut self, stop: Stop, doing: Doing<'_>) -> ScriptError {
        let _ = self.child.kill();
        let status = self.child.wait().ok();
        let said = self
            .stderr
            .take()
            .and_then(|t| t.join().ok())
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        let b = bounds();
        let what = format!("`{}`", doing.op);
        let message = match stop {
            Stop::Deadline => format!(
                "{what} ran past its wall-clock limit of {} ms (TBSIM_SCRIPT_DEADLINE_MS) and was stopped: \
                 one operation ran {} ms past it without returning (the time bound)",
                b.deadline.as_millis(),
                b.grace.as_millis()
            ),
            Stop::TooLarge(cap) => format!(
                "{what} answered more than {} MiB (TBSIM_SCRIPT_ANSWER_MB; the answer-size bound)",
                cap >> 20
            ),
            Stop::NotText => format!("{what}: the host's answer is not UTF-8 text"),
            Stop::Ended => died(&what, status, &said, b, None),
            Stop::Io(e) => died(&what, status, &said, b, Some(&e)),
        };
        let mut e = ScriptError::at_file(doing.file, message);
        if let Some((at, next)) = last_position(&said) {
            e.position = Some(at);
            if let Some((line, col)) = next {
                e.message.push_str(&format!(
                    " (in this statement, or in compiling the next one at line {line}, column {col}: \
                     constant expressions are computed as a statement is compiled)"
                ));
            }
        }
        e
    }
}

/// How an error says the host's stack overflowed (tbsim then asks where: see
/// `script_host`'s traced retry).
pub(crate) const STACK_OVERFLOW: &str = "overflowed the family-script host's stack";

/// A 1-based line and column.
type LineCol = (usize, usize);

/// The last position the host reported, and during a load the next top-level
/// statement (compiled, constants folded, before it begins).
fn last_position(said: &str) -> Option<(LineCol, Option<LineCol>)> {
    let rest = said
        .lines()
        .rev()
        .find_map(|l| l.trim().strip_prefix(POSITION_PREFIX))?;
    let pos = |t: &str| -> Option<LineCol> {
        let (line, col) = t.split_once(':')?;
        Some((line.parse().ok()?, col.parse().ok()?))
    };
    let (at, next) = match rest.split_once(" next ") {
        Some((at, next)) => (at, pos(next)),
        None => (rest, None),
    };
    Some((pos(at)?, next))
}

/// Why the host died, from its last words and its end.
fn died(
    what: &str,
    status: Option<std::process::ExitStatus>,
    said: &str,
    b: &Bounds,
    io: Option<&std::io::Error>,
) -> String {
    let signal = status.and_then(|s| s.signal());
    if said.contains("memory allocation of") || said.contains("unable to allocate") {
        format!(
            "{what} ran out of memory: the family-script host may use {} MiB of address space \
             (TBSIM_SCRIPT_MEMORY_MB; the heap bound), and one operation asked for more",
            b.memory >> 20
        )
    } else if said.contains("overflowed its stack") {
        format!("{what} {STACK_OVERFLOW}: a value or expression nested too deep (the depth bound)")
    } else if signal == Some(24) {
        format!(
            "{what} used the family-script host's {} s of CPU (the CPU bound)",
            b.cpu_seconds
        )
    } else if signal == Some(9) {
        format!(
            "{what}: the family-script host was killed (SIGKILL), most likely by the system for \
             memory; it may use {} MiB (the heap bound)",
            b.memory >> 20
        )
    } else {
        let how = match status {
            Some(s) => s.to_string(),
            None => "an unknown status".to_owned(),
        };
        let last = said
            .lines()
            .rev()
            .find(|l| !l.trim().is_empty() && !l.trim().starts_with(POSITION_PREFIX))
            .unwrap_or("");
        let io = io.map(|e| format!("; {e}")).unwrap_or_default();
        format!(
            "{what}: the family-script host ended without answering ({how}{io}){}",
            if last.is_empty() {
                String::new()
            } else {
                format!(": {}", tbsim_core::term::escape(last.trim()))
            }
        )
    }
}

/// Why an exchange stopped.
#[derive(Debug)]
enum Stop {
    Deadline,
    TooLarge(usize),
    NotText,
    Ended,
    Io(std::io::Error),
}

/// Starts the host program from a thread that lives as long as tbsim: the host
/// asks to be killed when its parent ends (`PR_SET_PDEATHSIG`), and Linux takes
/// the *thread* that started it for the parent, so a host started by a gate
/// worker would die with that worker while still pooled.
fn spawn(program: &Path) -> std::io::Result<Child> {
    type Reply = std::sync::mpsc::Sender<std::io::Result<Child>>;
    type Ask = std::sync::mpsc::Sender<(std::path::PathBuf, Reply)>;
    static SPAWNER: OnceLock<Option<std::sync::Mutex<Ask>>> = OnceLock::new();
    let start = |program: &Path| {
        Command::new(program)
            // mimalloc reserves 1 GiB of address space up front by default; in
            // 64 MiB steps the host's address-space limit is left to its heap.
            .env("MIMALLOC_ARENA_RESERVE", "64M")
            // A script's errors are values, not bugs: no backtrace is captured for
            // them (anyhow's capture, and the panic hook's printing, ran for
            // seconds in a host out of memory).
            .env("RUST_BACKTRACE", "0")
            .env("RUST_LIB_BACKTRACE", "0")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
    };
    let spawner = SPAWNER.get_or_init(|| {
        let (tx, rx) = std::sync::mpsc::channel::<(std::path::PathBuf, Reply)>();
        std::thread::Builder::new()
            .name("tbsim-script-spawner".into())
            .stack_size(256 << 10)
            .spawn(move || {
                for (program, reply) in rx {
                    let _ = reply.send(start(&program));
                }
            })
            .ok()
            .map(|_| std::sync::Mutex::new(tx))
    });
    let Some(spawner) = spawner else {
        return start(program);
    };
    let (tx, rx) = std::sync::mpsc::channel();
    spawner
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .send((program.to_owned(), tx))
        .map_err(|_| std::io::Error::other("the host spawner has ended"))?;
    rx.recv()
        .map_err(|_| std::io::Error::other("the host spawner has ended"))?
}

/// Puts the started host under its kernel limits.
fn limit(child: &Child) -> std::io::Result<()> {
    use rustix::process::{Pid, Resource, Rlimit, prlimit};
    let b = bounds();
    let pid = i32::try_from(child.id())
        .ok()
        .and_then(Pid::from_raw)
        .ok_or_else(|| std::io::Error::other("the host has no process id"))?;
    let set = |r: Resource, soft: u64, hard: u64| {
        prlimit(
            Some(pid),
            r,
            Rlimit {
                current: Some(soft),
                maximum: Some(hard),
            },
        )
        .map(drop)
        .map_err(std::io::Error::from)
    };
    set(Resource::As, b.memory, b.memory)?;
    set(Resource::Cpu, b.cpu_seconds, b.cpu_seconds + 10)?;
    set(Resource::Core, 0, 0)?;
    set(Resource::Fsize, 0, 0)?;
    Ok(())
}

impl Drop for HostProcess {
    fn drop(&mut self) {
        // A program that does not end is killed; its standard error ends with it.
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Some(t) = self.stderr.take() {
            let _ = t.join();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_last_reported_position_names_the_statement() {
        let said = "tbsim-script: at 3:5\ntbsim-script: at 12:9\nmemory allocation of 1500000000 bytes failed\n";
        assert_eq!(last_position(said), Some(((12, 9), None)));
        assert_eq!(
            last_position("tbsim-script: at 2:1 next 4:1\n"),
            Some(((2, 1), Some((4, 1))))
        );
        // A report the host took back (its request finished after all).
        assert_eq!(
            last_position("tbsim-script: at 4:1\ntbsim-script: at -\n"),
            None
        );
        assert_eq!(last_position("thread panicked\n"), None);
    }
}
