//! Where a script is: the statement of the family's own file it last began.
//!
//! Some bounds stop a script with no span of their own: the tick limit, an
//! allocation the kernel refuses (the host aborts), and tbsim's kill of a host
//! still silent past its deadline (one long operation). A hook before every
//! statement keeps the current one here, so each of them still names
//! `file:line:column`:
//!
//! - the tick limit's error takes it when Starlark gives none ([`current`]);
//! - in the host program ([`report_on_stderr`]), a refused allocation writes it
//!   on standard error before the process aborts ([`Guarded`]), and a watchdog
//!   writes it once a request's deadline has passed, before tbsim's kill.
//!
//! tbsim reads the last [`REPORT_PREFIX`] line of a dead host's standard error.
//! Statements of the prelude are not recorded: a bound hit inside a builder is
//! named at the family's line that called it.

use std::alloc::{GlobalAlloc, Layout};
use std::io::Write;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Condvar, Mutex, OnceLock};
use std::time::{Duration, Instant};

use starlark::codemap::FileSpanRef;
use starlark::eval::{BeforeStmtFunc, Evaluator};

/// How a report line begins on the host's standard error.
pub use tbsim_core::script_error::POSITION_PREFIX as REPORT_PREFIX;

/// `line << 32 | column`, both 1-based; 0 when no statement of the family ran.
/// Kept for the host program's watchdog and allocator (one serving thread); the
/// evaluating thread's own copy is [`HERE`] (in process, several threads evaluate).
static AT: AtomicU64 = AtomicU64::new(0);
/// While a script loads and [`AT`] is a top-level statement: the next one, which
/// Starlark compiles (folding constant expressions such as `"a" * n`) before it
/// begins. 0 otherwise.
static NEXT: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// [`AT`] for this thread.
    static HERE: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
    /// The loading script's top-level statements: begin offset and packed position.
    static TOPS: std::cell::RefCell<Vec<(u32, u64)>> = const { std::cell::RefCell::new(Vec::new()) };
}

fn pack(line: usize, col: usize) -> u64 {
    let cap = |v: usize| (v as u64).min(u64::from(u32::MAX));
    cap(line) << 32 | cap(col)
}

fn unpack(at: u64) -> Option<(usize, usize)> {
    (at != 0).then_some(((at >> 32) as usize, (at & 0xffff_ffff) as usize))
}

/// Marks a load of `ast`: its top-level statements, for [`NEXT`].
pub(crate) fn loading(ast: &starlark::syntax::AstModule) {
    let spans = ast.stmt_locations();
    // Top level: statements no other statement contains.
    let mut tops: Vec<(u32, u64)> = Vec::new();
    let mut end = 0u32;
    for f in spans {
        let (b, e) = (f.span.begin().get(), f.span.end().get());
        if b >= end && !tops.iter().any(|&(o, _)| o == b) {
            let r = f.resolve_span();
            tops.push((b, pack(r.begin.line + 1, r.begin.column + 1)));
            end = e;
        }
    }
    tops.sort_unstable();
    TOPS.with(|t| *t.borrow_mut() = tops);
}

/// Ends a load's marking.
pub(crate) fn loaded() {
    TOPS.with(|t| t.borrow_mut().clear());
    NEXT.store(0, Ordering::Relaxed);
}
static REPORT: AtomicBool = AtomicBool::new(false);

/// How long after a request's deadline the watchdog speaks: before tbsim's kill,
/// which comes at least a second after it.
const WATCH_AFTER: Duration = Duration::from_millis(300);

/// The statement this thread's evaluation last began, 1-based line and column.
pub fn current() -> Option<(usize, usize)> {
    unpack(HERE.with(std::cell::Cell::get))
}

/// Makes this process report positions on standard error (the host program).
pub fn report_on_stderr() {
    REPORT.store(true, Ordering::Relaxed);
}

/// Follows `eval`'s statements from now on.
pub(crate) fn follow(eval: &mut Evaluator<'_, '_, '_>) {
    eval.before_stmt_for_dap(BeforeStmtFunc::Fn(&before_stmt));
}

fn before_stmt(span: FileSpanRef, _continued: bool, _eval: &mut Evaluator<'_, '_, '_>) {
    if span.file.filename() == crate::PRELUDE_FILE {
        return;
    }
    let r = span.resolve_span();
    let at = pack(r.begin.line + 1, r.begin.column + 1);
    HERE.with(|h| h.set(at));
    if REPORT.load(Ordering::Relaxed) {
        AT.store(at, Ordering::Relaxed);
    }
    let next = TOPS.with(|t| {
        let t = t.borrow();
        let at = span.span.begin().get();
        t.binary_search_by_key(&at, |&(o, _)| o)
            .ok()
            .and_then(|i| t.get(i + 1))
            .map_or(0, |&(_, p)| p)
    });
    NEXT.store(next, Ordering::Relaxed);
    if TRACE.load(Ordering::Relaxed) && LAST_TRACED.with(|l| l.replace(at)) != at {
        report();
    }
}

/// Whether every statement's position is written as it begins (see [`Trace`]).
static TRACE: AtomicBool = AtomicBool::new(false);

thread_local! {
    /// The position a trace wrote last (a statement that begins again on the same
    /// position, a one-line loop, is written once).
    static LAST_TRACED: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// A request traced from [`Trace::on`] to its drop, in the host program only:
/// each statement's position is written on standard error as it begins. tbsim
/// asks for it when a host died where nothing could say the line (the
/// interpreter's own stack overflowing on a deep value): scripts are hermetic, so
/// the same request on a fresh host dies at the same statement, and the last
/// position written names it.
#[derive(Debug)]
pub struct Trace(());

impl Trace {
    /// Traces until the guard is dropped, when `yes` and this is the host program.
    pub fn on(yes: bool) -> Trace {
        LAST_TRACED.with(|l| l.set(0));
        TRACE.store(yes && REPORT.load(Ordering::Relaxed), Ordering::Relaxed);
        Trace(())
    }
}

impl Drop for Trace {
    fn drop(&mut self) {
        TRACE.store(false, Ordering::Relaxed);
    }
}

/// One evaluation, from [`Evaluation::begin`] to its drop: clears the position
/// and, in the host program, arms the watchdog for `deadline`.
pub(crate) struct Evaluation(u64);

impl Evaluation {
    pub(crate) fn begin(deadline: Option<Instant>) -> Evaluation {
        AT.store(0, Ordering::Relaxed);
        HERE.with(|h| h.set(0));
        NEXT.store(0, Ordering::Relaxed);
        let w = watch();
        let mut s = w.state.lock().unwrap_or_else(|e| e.into_inner());
        s.serial += 1;
        s.deadline = deadline.filter(|_| REPORT.load(Ordering::Relaxed));
        w.changed.notify_all();
        Evaluation(s.serial)
    }
}

impl Drop for Evaluation {
    fn drop(&mut self) {
        let w = watch();
        let mut s = w.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.serial == self.0 {
            s.deadline = None;
        }
        if s.reported == self.0 {
            // It finished after all: what tbsim reads next is not about it.
            let _ = std::io::stderr().write_all(format!("{REPORT_PREFIX}-\n").as_bytes());
        }
    }
}

struct Watch {
    state: Mutex<WatchState>,
    changed: Condvar,
}

struct WatchState {
    serial: u64,
    deadline: Option<Instant>,
    /// The last evaluation the watchdog reported.
    reported: u64,
}

fn watch() -> &'static Watch {
    static W: OnceLock<Watch> = OnceLock::new();
    W.get_or_init(|| {
        if REPORT.load(Ordering::Relaxed) {
            // Without its thread the host still works; only the kill goes unplaced.
            let _ = std::thread::Builder::new()
                .name("tbsim-script-watch".into())
                .stack_size(64 << 10)
                .spawn(watchdog);
        }
        Watch {
            state: Mutex::new(WatchState {
                serial: 0,
                deadline: None,
                reported: 0,
            }),
            changed: Condvar::new(),
        }
    })
}

/// Reports the position once per evaluation that runs `WATCH_AFTER` past its deadline.
fn watchdog() {
    let w = watch();
    let mut s = w.state.lock().unwrap_or_else(|e| e.into_inner());
    loop {
        match s.deadline {
            Some(at) if s.serial != s.reported => {
                let due = at + WATCH_AFTER;
                let now = Instant::now();
                if now >= due {
                    s.reported = s.serial;
                    report();
                } else {
                    s = w
                        .changed
                        .wait_timeout(s, due - now)
                        .unwrap_or_else(|e| e.into_inner())
                        .0;
                }
            }
            _ => s = w.changed.wait(s).unwrap_or_else(|e| e.into_inner()),
        }
    }
}

/// Writes the position on standard error, allocating nothing (it also runs when
/// an allocation has just failed).
fn report() {
    let Some((line, col)) = unpack(AT.load(Ordering::Relaxed)) else {
        return;
    };
    let mut buf = [0u8; 96];
    let prefix = REPORT_PREFIX.as_bytes();
    buf[..prefix.len()].copy_from_slice(prefix);
    let mut n = prefix.len();
    n += digits(line, &mut buf[n..]);
    buf[n] = b':';
    n += 1;
    n += digits(col, &mut buf[n..]);
    if let Some((line, col)) = unpack(NEXT.load(Ordering::Relaxed)) {
        buf[n..n + 6].copy_from_slice(b" next ");
        n += 6;
        n += digits(line, &mut buf[n..]);
        buf[n] = b':';
        n += 1;
        n += digits(col, &mut buf[n..]);
    }
    buf[n] = b'\n';
    n += 1;
    let _ = std::io::stderr().write_all(&buf[..n]);
}

/// `v` in decimal at the start of `out`; the digits written.
fn digits(v: usize, out: &mut [u8]) -> usize {
    let mut tmp = [0u8; 20];
    let mut i = tmp.len();
    let mut v = v;
    loop {
        i -= 1;
        tmp[i] = b'0' + (v % 10) as u8;
        v /= 10;
        if v == 0 {
            break;
        }
    }
    let len = tmp.len() - i;
    out[..len].copy_from_slice(&tmp[i..]);
    len
}

/// A global allocator that, in the host program, reports the position when an
/// allocation is refused (then Rust aborts the host as it would anyway).
#[derive(Debug)]
pub struct Guarded<A>(pub A);

// The one unsafe item of the crate: a refused allocation aborts the process with
// no hook a safe program can set, so the line it came from is written here, just
// before. Every call is passed to the inner allocator unchanged.
#[allow(unsafe_code)]
unsafe impl<A: GlobalAlloc> GlobalAlloc for Guarded<A> {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller's contract is the inner allocator's.
        refused(unsafe { self.0.alloc(layout) })
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as `alloc`.
        refused(unsafe { self.0.alloc_zeroed(layout) })
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from the inner allocator with `layout`.
        unsafe { self.0.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: as `dealloc`, and `new_size` is the caller's to keep valid.
        refused(unsafe { self.0.realloc(ptr, layout, new_size) })
    }
}

fn refused(p: *mut u8) -> *mut u8 {
    if p.is_null() && REPORT.load(Ordering::Relaxed) {
        report();
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn digits_are_decimal() {
        let mut b = [0u8; 20];
        let n = digits(0, &mut b);
        assert_eq!(&b[..n], b"0");
        let n = digits(4_294_967_295, &mut b);
        assert_eq!(&b[..n], b"4294967295");
    }
}
