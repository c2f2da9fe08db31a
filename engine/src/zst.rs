//! Zstandard-compressed trajectories (`trajectory.jsonl.zst`), for long RL jobs that
//! write millions of lines.
//!
//! The file is a sequence of independent zstd frames, each holding whole lines: the
//! writer buffers lines and compresses the buffer into one frame once it holds
//! [`FRAME_BYTES`], and when the run is finished ([`FrameWriter::finish`], also on
//! drop). Any zstd decoder (`zstd -d`) reads the concatenation as one stream, and
//! the decompressed bytes are exactly those of the plain `trajectory.jsonl` (the
//! digest is over the same lines). The cost of compressing in frames: a crash loses
//! the lines of the frame in progress (at most [`FRAME_BYTES`]), where a plain
//! trajectory loses at most the step in flight.
//!
//! Reading ([`decompress`]) caps the decompressed size, so a small file cannot
//! expand into an unbounded one.

use std::io::{Read, Write};

/// Uncompressed bytes per frame: large enough for the compressor to find the
/// repetition between lines (a busy-day run is about 60 KB), small enough that a
/// crash loses little.
pub const FRAME_BYTES: usize = 64 << 10;

/// Every zstd frame starts with these bytes.
pub const MAGIC: [u8; 4] = [0x28, 0xB5, 0x2F, 0xFD];

/// Buffers what is written and emits it as zstd frames into `out`.
pub struct FrameWriter<W: Write> {
    out: W,
    pending: Vec<u8>,
}

impl<W: Write> std::fmt::Debug for FrameWriter<W> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FrameWriter")
            .field("pending", &self.pending.len())
            .finish_non_exhaustive()
    }
}

impl<W: Write> FrameWriter<W> {
    /// A writer compressing into `out`.
    pub fn new(out: W) -> Self {
        FrameWriter {
            out,
            pending: Vec::with_capacity(FRAME_BYTES + 4096),
        }
    }

    /// Compresses everything buffered into one frame and flushes `out`. Idempotent:
    /// with nothing buffered it writes nothing; more lines after it start a new frame.
    pub fn finish(&mut self) -> std::io::Result<()> {
        if !self.pending.is_empty() {
            let frame = ruzstd::encoding::compress_to_vec(
                self.pending.as_slice(),
                ruzstd::encoding::CompressionLevel::Fastest,
            );
            self.pending.clear();
            self.out.write_all(&frame)?;
        }
        self.out.flush()
    }
}

impl<W: Write> Write for FrameWriter<W> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.pending.extend_from_slice(buf);
        Ok(buf.len())
    }

    /// A frame is cut only once [`FRAME_BYTES`] are buffered (the trajectory flushes
    /// after every line; a frame per line would not compress).
    fn flush(&mut self) -> std::io::Result<()> {
        if self.pending.len() >= FRAME_BYTES {
            self.finish()?;
        }
        Ok(())
    }
}

impl<W: Write> Drop for FrameWriter<W> {
    fn drop(&mut self) {
        // Errors were reported by `finish` when the trajectory was finished; a
        // writer dropped without it still leaves its lines on disk if it can.
        let _ = self.finish();
    }
}

/// Whether `bytes` start like a zstd frame.
pub fn is_zstd(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

/// A decompression that failed.
#[derive(Debug, thiserror::Error)]
pub enum ZstdError {
    /// The data is not a sequence of zstd frames.
    #[error("not a valid zstd stream: {0}")]
    Corrupt(String),
    /// It expands beyond the cap.
    #[error("it decompresses to more than {0} bytes")]
    TooLarge(u64),
}

/// Decompresses every frame of `bytes`, up to `cap` bytes of output. A torn last
/// frame (a crash while it was written) ends the output at the frames before it,
/// the way a torn last line of a plain trajectory is dropped.
pub fn decompress(mut bytes: &[u8], cap: u64) -> Result<Vec<u8>, ZstdError> {
    let mut out = Vec::new();
    while !bytes.is_empty() {
        let before = out.len();
        let frame = ruzstd::decoding::StreamingDecoder::new(&mut bytes);
        let read = frame.map_err(|e| e.to_string()).and_then(|d| {
            let room = (cap + 1).saturating_sub(out.len() as u64);
            d.take(room)
                .read_to_end(&mut out)
                .map_err(|e| e.to_string())
        });
        match read {
            Ok(_) if out.len() as u64 > cap => return Err(ZstdError::TooLarge(cap)),
            Ok(_) => {}
            // Only the last frame may be torn: nothing after it.
            Err(_) if bytes.is_empty() && before > 0 => {
                out.truncate(before);
                break;
            }
            Err(e) => return Err(ZstdError::Corrupt(e)),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(n: usize) -> Vec<u8> {
        (0..n)
            .map(|i| format!("{{\"type\":\"event\",\"t\":{i},\"text\":\"line number {i}\"}}\n"))
            .collect::<String>()
            .into_bytes()
    }

    #[test]
    fn frames_round_trip_and_compress() {
        let data = lines(5_000);
        let mut w = FrameWriter::new(Vec::new());
        for l in data.split_inclusive(|b| *b == b'\n') {
            w.write_all(l).unwrap();
            w.flush().unwrap();
        }
        w.finish().unwrap();
        let packed = std::mem::take(&mut w.out);
        drop(w);
        assert!(is_zstd(&packed));
        assert!(data.len() > 2 * FRAME_BYTES, "several frames");
        assert!(
            packed.len() * 4 < data.len(),
            "{} of {}",
            packed.len(),
            data.len()
        );
        assert_eq!(decompress(&packed, 1 << 30).unwrap(), data);
    }

    #[test]
    fn the_cap_and_corruption_are_errors_and_a_torn_tail_is_dropped() {
        let data = lines(3_000);
        let mut w = FrameWriter::new(Vec::new());
        w.write_all(&data[..FRAME_BYTES + 10]).unwrap();
        w.flush().unwrap();
        let first = w.out.len();
        w.write_all(&data[FRAME_BYTES + 10..]).unwrap();
        w.finish().unwrap();
        let packed = std::mem::take(&mut w.out);
        drop(w);
        assert!(matches!(
            decompress(&packed, 1000),
            Err(ZstdError::TooLarge(1000))
        ));
        let torn = &packed[..packed.len() - 3];
        assert_eq!(
            decompress(torn, 1 << 30).unwrap(),
            &data[..FRAME_BYTES + 10]
        );
        assert!(first < packed.len());
        assert!(matches!(
            decompress(b"\x28\xb5\x2f\xfdgarbage", 1 << 30),
            Err(ZstdError::Corrupt(_))
        ));
    }
}
