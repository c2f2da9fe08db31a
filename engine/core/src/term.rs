//! Text from someone else, made safe for a terminal.
//!
//! A family script's `fail()` message, a model's reply in `tbsim family draft`
//! and a scenario's text are written by others. Printed raw, an escape sequence
//! in them sets the window title, writes the clipboard (OSC 52), moves the cursor
//! or clears the screen. [`escape`] writes every control character but newline
//! and tab as a visible escape (`\x1b`, `\u{9b}`), and the bidirectional
//! overrides that reorder what a reader sees (`\u{202e}`) likewise, so the text
//! reads the same on a terminal as in a file.

use std::borrow::Cow;

/// Whether `c` is shown escaped: C0 controls but `\n` and `\t`, DEL, C1
/// controls, and the bidirectional embedding, override and isolate characters.
pub fn is_unsafe(c: char) -> bool {
    (c.is_control() && c != '\n' && c != '\t')
        || matches!(c, '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `text` with every [`is_unsafe`] character written as a Rust-style escape
/// (`\x1b`, `\r`, `\u{9b}`); borrowed when there is none.
pub fn escape(text: &str) -> Cow<'_, str> {
    if !text.chars().any(is_unsafe) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        if !is_unsafe(c) {
            out.push(c);
        } else if c == '\r' {
            out.push_str("\\r");
        } else if (c as u32) < 0x80 {
            out.push_str(&format!("\\x{:02x}", c as u32));
        } else {
            out.push_str(&format!("\\u{{{:x}}}", c as u32));
        }
    }
    Cow::Owned(out)
}

/// A writer that passes text on with [`escape`] applied: for output streams
/// that print text written by others (the gate's report, with script errors).
/// A character split across two writes is held back until it is whole.
#[derive(Debug)]
pub struct Escaped<W: std::io::Write> {
    inner: W,
    pending: Vec<u8>,
}

impl<W: std::io::Write> Escaped<W> {
    /// Escapes what is written to `inner`.
    pub fn new(inner: W) -> Escaped<W> {
        Escaped {
            inner,
            pending: Vec::new(),
        }
    }
}

impl<W: std::io::Write> std::io::Write for Escaped<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(buf);
        let valid = match std::str::from_utf8(&self.pending) {
            Ok(s) => s.len(),
            // An incomplete character at the end waits; an invalid byte is
            // written as the replacement character.
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => self.pending.len(),
        };
        let text = String::from_utf8_lossy(&self.pending[..valid]).into_owned();
        self.inner.write_all(escape(&text).as_bytes())?;
        self.pending.drain(..valid);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escapes_reach_the_terminal_as_text() {
        assert!(matches!(escape("plain\ttext\nnext"), Cow::Borrowed(_)));
        assert_eq!(
            escape("a\x1b]52;c;aGk=\x07b\x1b[2J\r\u{9b}31m\u{202e}x\x7f"),
            "a\\x1b]52;c;aGk=\\x07b\\x1b[2J\\r\\u{9b}31m\\u{202e}x\\x7f"
        );
        assert_eq!(escape("é ü 日本"), "é ü 日本");
    }

    #[test]
    fn a_writer_escapes_across_writes() {
        use std::io::Write;
        let mut w = Escaped::new(Vec::new());
        let c1 = "\u{9b}".as_bytes();
        w.write_all(b"a\x1b[1m").unwrap();
        w.write_all(&c1[..1]).unwrap();
        w.write_all(&c1[1..]).unwrap();
        w.write_all("é\n".as_bytes()).unwrap();
        assert_eq!(String::from_utf8(w.inner).unwrap(), "a\\x1b[1m\\u{9b}é\n");
    }

    proptest::proptest! {
        #[test]
        fn nothing_unsafe_survives(s in ".*") {
            let e = escape(&s);
            proptest::prop_assert!(!e.chars().any(is_unsafe));
        }
    }
}
