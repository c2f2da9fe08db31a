//! The family-script host loaded into tbsim's own process: `libtbsim_script.so`
//! (`engine/script/src/embed.rs`), found beside the `tbsim-script` program and
//! handed the same request lines the program reads from its pipe.
//!
//! A pipe round trip per generated task woke a sleeping process, often on the
//! other CPU, and found its caches cold: that cost about as much as evaluating the
//! script (`runs/bench/2026-11-27/script-gen-s17.md`). In-process, a request is a
//! call. The library keeps its own serde_json (starlark's `arbitrary_precision`
//! stays out of tbsim's build), its own allocator and its own standard library;
//! only bytes cross, copied before the next call. `solve` stays in the program:
//! its `tools` calls need the pipe. `TBSIM_SCRIPT_IN_PROCESS=0` turns it off.
//!
//! The library's allocator is mimalloc (local-dynamic TLS, the model meant for
//! dlopen). It takes the thread that loads it for the process's main thread, so
//! the library is loaded on a thread of its own that never ends
//! ([`Library::load`]): loaded on a test thread that ended, the next thread given
//! that thread's address crashed in `mi_thread_init` (session 17's CI crash; a
//! test below reproduces it without the fix).

// A shared library is called through raw pointers; each use says why it is sound.
#![allow(unsafe_code)]

use std::ffi::c_void;
use std::path::Path;
use std::ptr::NonNull;
use std::sync::OnceLock;

type Protocol = unsafe extern "C" fn() -> u64;
type Open = unsafe extern "C" fn() -> *mut c_void;
type Answer = unsafe extern "C" fn(*mut c_void, *const u8, usize, *mut usize) -> *const u8;
type Close = unsafe extern "C" fn(*mut c_void);

/// The loaded library: kept for the life of the process (its functions are
/// copied out of it, so it is never unloaded).
pub(crate) struct Library {
    _lib: libloading::Library,
    open: Open,
    answer: Answer,
    close: Close,
}

impl std::fmt::Debug for Library {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Library")
    }
}

/// The library's file name on this platform.
fn file_name() -> String {
    format!(
        "{}tbsim_script{}",
        std::env::consts::DLL_PREFIX,
        std::env::consts::DLL_SUFFIX
    )
}

impl Library {
    /// The library beside `program` (the host program tbsim would start), if it is
    /// there, loads, and speaks `protocol`; loaded once per process. Not with
    /// `TBSIM_SCRIPT_IN_PROCESS=0`, which keeps every host on the pipe.
    pub(crate) fn beside(program: &Path, protocol: u64) -> Option<&'static Library> {
        static LIB: OnceLock<Option<Library>> = OnceLock::new();
        LIB.get_or_init(|| {
            if std::env::var_os("TBSIM_SCRIPT_IN_PROCESS").is_some_and(|v| v == "0") {
                return None;
            }
            // Built with the program (one crate, two targets); a library of another
            // protocol is refused below, and the program is used instead.
            let path = program.parent()?.join(file_name());
            Library::load(&path, protocol)
        })
        .as_ref()
    }

    /// Loads the library on a thread of its own, which never ends (see the module
    /// docs): the library's mimalloc knows its main thread by the thread pointer
    /// of the thread that loaded it, which glibc gives to a new thread once the
    /// old one ends.
    fn load(path: &Path, protocol: u64) -> Option<Library> {
        let (tx, rx) = std::sync::mpsc::channel();
        let path = path.to_owned();
        std::thread::Builder::new()
            .name("tbsim-script-library".into())
            .stack_size(64 * 1024)
            .spawn(move || {
                let _ = tx.send(Library::load_here(&path, protocol));
                loop {
                    std::thread::park();
                }
            })
            .ok()?;
        rx.recv().ok()?
    }

    fn load_here(path: &Path, protocol: u64) -> Option<Library> {
        // SAFETY: the library is tbsim's own host (engine/script), built by cargo
        // beside the program; loading runs only Rust's and mimalloc's initialisers.
        let lib = unsafe { libloading::Library::new(path) }.ok()?;
        // SAFETY: each symbol has the signature engine/script/src/embed.rs gives
        // it, and the library is kept (in a static) for as long as they are used.
        let (speaks, open, answer, close) = unsafe {
            (
                *lib.get::<Protocol>(b"tbsim_script_protocol\0").ok()?,
                *lib.get::<Open>(b"tbsim_script_open\0").ok()?,
                *lib.get::<Answer>(b"tbsim_script_answer\0").ok()?,
                *lib.get::<Close>(b"tbsim_script_close\0").ok()?,
            )
        };
        // SAFETY: takes nothing, returns a number.
        (unsafe { speaks() } == protocol).then_some(Library {
            _lib: lib,
            open,
            answer,
            close,
        })
    }
}

/// One embedded host.
pub(crate) struct Embedded {
    lib: &'static Library,
    host: NonNull<c_void>,
}

// SAFETY: the library's host is `Send` (asserted in embed.rs), and `answer` takes
// `&mut self`, so one thread at a time uses it.
unsafe impl Send for Embedded {}

impl std::fmt::Debug for Embedded {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Embedded")
    }
}

impl Embedded {
    /// A new host in `lib`.
    pub(crate) fn open(lib: &'static Library) -> Option<Embedded> {
        // SAFETY: takes nothing; returns a fresh handle, or null on failure.
        let host = NonNull::new(unsafe { (lib.open)() })?;
        Some(Embedded { lib, host })
    }

    /// The answer line to one request line.
    pub(crate) fn answer(&mut self, line: &str) -> String {
        let mut len = 0usize;
        // SAFETY: the handle is open and ours alone (`&mut self`); `line` is live
        // for the call; `len` is writable.
        let at =
            unsafe { (self.lib.answer)(self.host.as_ptr(), line.as_ptr(), line.len(), &mut len) };
        // SAFETY: the answer's `len` bytes stay valid until this handle's next call,
        // and are copied out before it.
        let bytes = unsafe { std::slice::from_raw_parts(at, len) };
        // The library answers with a Rust `String`, always UTF-8; checked all the
        // same (the strict check is the fast one), a bad byte replaced, not trusted.
        match std::str::from_utf8(bytes) {
            Ok(text) => text.to_owned(),
            Err(_) => String::from_utf8_lossy(bytes).into_owned(),
        }
    }
}

impl Drop for Embedded {
    fn drop(&mut self) {
        // SAFETY: the handle came from `open` and is not used after this.
        unsafe { (self.lib.close)(self.host.as_ptr()) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Barrier;

    /// The library beside the host program the tests use.
    fn library_path() -> std::path::PathBuf {
        let program = crate::script_host::program().expect("the host program");
        program.parent().expect("a folder").join(file_name())
    }

    /// The library is loaded by a thread that then ends, and new threads (one of
    /// which glibc gives the ended thread's stack and thread pointer) use it: with
    /// the library loaded on that thread itself, the first of them crashed.
    #[test]
    fn a_library_loaded_by_a_thread_that_ended_answers_on_new_threads() {
        let path = library_path();
        let lib: &'static Library = std::thread::spawn(move || {
            let lib = Library::load(&path, crate::script_host::PROTOCOL)
                .expect("the library beside the host program loads");
            let lib: &'static Library = Box::leak(Box::new(lib));
            let mut e = Embedded::open(lib).expect("a host opens");
            assert!(e.answer(r#"{"op":"hello"}"#).contains("\"protocol\""));
            lib
        })
        .join()
        .expect("loaded");
        for _ in 0..32 {
            std::thread::spawn(move || {
                let mut e = Embedded::open(lib).expect("a host opens");
                assert!(e.answer(r#"{"op":"hello"}"#).contains("\"protocol\""));
            })
            .join()
            .expect("answered");
        }
    }

    /// Opens hosts on many threads at once, each loading a bundled family (a few
    /// megabytes of allocation), and closes some on other threads than opened
    /// them. The first threads start before the library is loaded, and the rest
    /// after, as the test suite's threads did when the library's allocator crashed
    /// on a thread's first allocation in it.
    #[test]
    fn hosts_open_answer_and_close_on_many_threads_at_once() {
        let path = library_path();
        let source = std::fs::read_to_string(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../content/families/inventory_reorder/family.star"
        ))
        .expect("a bundled family");
        let load = serde_json::json!({
            "op": "load", "file": "inventory_reorder/family.star", "source": source,
        })
        .to_string();
        let protocol = format!("\"protocol\":{}", crate::script_host::PROTOCOL);
        let work = |lib: &'static Library| {
            let mut e = Embedded::open(lib).expect("a host opens");
            let hi = e.answer(r#"{"op":"hello"}"#);
            assert!(hi.contains(&protocol), "{hi}");
            let c = e.answer(r#"{"op":"corpus","corpus":{"company":"Acme"}}"#);
            assert!(c.starts_with("{\"ok\""), "{c}");
            let loaded = e.answer(&load);
            assert!(loaded.starts_with("{\"ok\""), "{loaded}");
            assert!(loaded.contains("inventory_reorder/"), "{loaded}");
            e
        };
        let lib: OnceLock<&'static Library> = OnceLock::new();
        let ready = Barrier::new(7);
        let mut opened: Vec<Embedded> = std::thread::scope(|s| {
            let early: Vec<_> = (0..6)
                .map(|_| {
                    s.spawn(|| {
                        // Live threads before the library is loaded.
                        let _warm = vec![0u8; 1 << 12];
                        ready.wait();
                        work(lib.get().copied().expect("loaded"))
                    })
                })
                .collect();
            // Loaded, and first used, on a thread that ends before the others use
            // it: the library's allocator must not take that thread for one that
            // lives as long as the process.
            s.spawn(|| {
                let loaded = Library::load(&path, crate::script_host::PROTOCOL)
                    .expect("the library beside the host program loads");
                let loaded: &'static Library = Box::leak(Box::new(loaded));
                drop(work(loaded));
                assert!(lib.set(loaded).is_ok());
            })
            .join()
            .expect("loaded");
            ready.wait();
            early
                .into_iter()
                .map(|t| t.join().expect("no panic"))
                .collect()
        });
        let lib = lib.get().copied().expect("loaded");
        for _ in 0..6 {
            opened.extend(std::thread::scope(|s| {
                let threads: Vec<_> = (0..6).map(|_| s.spawn(|| work(lib))).collect();
                threads
                    .into_iter()
                    .map(|t| t.join().expect("no panic"))
                    .collect::<Vec<_>>()
            }));
            // Half are closed here, half on yet another new thread.
            let (here, there): (Vec<_>, Vec<_>) = std::mem::take(&mut opened)
                .into_iter()
                .enumerate()
                .partition(|(i, _)| i % 2 == 0);
            drop(here);
            std::thread::spawn(move || drop(there))
                .join()
                .expect("closed");
        }
    }
}
