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
//! its `tools` calls need the pipe. Opt-in (`TBSIM_SCRIPT_IN_PROCESS=1`) until it
//! has passed the whole test suite in process.

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
    /// there, loads, and speaks `protocol`; loaded once per process. Only when
    /// `TBSIM_SCRIPT_IN_PROCESS=1`: the embedded host is not yet the default (see
    /// `runs/bench/2026-11-27/script-gen-s17.md`, "In process, not yet by default").
    pub(crate) fn beside(program: &Path, protocol: u64) -> Option<&'static Library> {
        static LIB: OnceLock<Option<Library>> = OnceLock::new();
        LIB.get_or_init(|| {
            if std::env::var_os("TBSIM_SCRIPT_IN_PROCESS").is_none_or(|v| v != "1") {
                return None;
            }
            // Built with the program (one crate, two targets); a library of another
            // protocol is refused below, and the program is used instead.
            let path = program.parent()?.join(file_name());
            Library::load(&path, protocol)
        })
        .as_ref()
    }

    fn load(path: &Path, protocol: u64) -> Option<Library> {
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
