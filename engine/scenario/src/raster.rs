//! Deterministic raster images: a [`Drawing`] recipe becomes PNG bytes.
//!
//! Scenario files stay readable text, so pictures (the ADs target-density heatmaps,
//! the event-planning road map) are stored as recipes and rendered when the world is
//! built. The rendering is a pure function of the recipe: integer geometry, no
//! anti-aliasing, a palette in order of first use, and a PNG encoder written here
//! (zlib with one fixed-Huffman deflate block, CRC-32 and Adler-32 by hand), so the
//! same recipe gives the same bytes on every platform and in every version that
//! keeps the test pinning a reference drawing's BLAKE3.
//!
//! The image is indexed colour (at most 256 colours, enforced by scenario
//! validation), packed at the smallest bit depth the palette allows (1, 2, 4 or 8). The compressor only looks for two kinds of repeats, the previous
//! pixel (distance 1) and the pixel above (distance = row length), which is what
//! flat-coloured charts consist of; it keeps images to a few kilobytes.
//!
//! Text uses a built-in 5x7 bitmap font covering ASCII `' '..='_'` (space, digits,
//! upper-case letters and common punctuation); lower-case letters are drawn as
//! upper-case. Each glyph advances 6 font pixels.

use crate::spec::{Drawing, Shape};

/// Largest canvas side, in pixels.
pub const MAX_SIDE: u32 = 2048;
/// Most distinct colours in one drawing (background included).
pub const MAX_COLOURS: usize = 256;
/// Font cell: glyph width, in font pixels (glyphs are 7 high).
pub const GLYPH_W: u32 = 5;
/// Horizontal advance per character, in font pixels.
pub const ADVANCE: u32 = 6;

/// The 5x7 font, ASCII 0x20 (space) to 0x5F (`_`). Each glyph is seven rows, top
/// first; bit 4 of a row is its leftmost pixel.
const FONT: [[u8; 7]; 64] = [
    [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00], // ' '
    [0x04, 0x04, 0x04, 0x04, 0x04, 0x00, 0x04], // !
    [0x0A, 0x0A, 0x00, 0x00, 0x00, 0x00, 0x00], // "
    [0x0A, 0x0A, 0x1F, 0x0A, 0x1F, 0x0A, 0x0A], // #
    [0x04, 0x0F, 0x14, 0x0E, 0x05, 0x1E, 0x04], // $
    [0x18, 0x19, 0x02, 0x04, 0x08, 0x13, 0x03], // %
    [0x0C, 0x12, 0x14, 0x08, 0x15, 0x12, 0x0D], // &
    [0x04, 0x04, 0x00, 0x00, 0x00, 0x00, 0x00], // '
    [0x02, 0x04, 0x08, 0x08, 0x08, 0x04, 0x02], // (
    [0x08, 0x04, 0x02, 0x02, 0x02, 0x04, 0x08], // )
    [0x00, 0x04, 0x15, 0x0E, 0x15, 0x04, 0x00], // *
    [0x00, 0x04, 0x04, 0x1F, 0x04, 0x04, 0x00], // +
    [0x00, 0x00, 0x00, 0x00, 0x0C, 0x04, 0x08], // ,
    [0x00, 0x00, 0x00, 0x1F, 0x00, 0x00, 0x00], // -
    [0x00, 0x00, 0x00, 0x00, 0x00, 0x0C, 0x0C], // .
    [0x00, 0x01, 0x02, 0x04, 0x08, 0x10, 0x00], // /
    [0x0E, 0x11, 0x13, 0x15, 0x19, 0x11, 0x0E], // 0
    [0x04, 0x0C, 0x04, 0x04, 0x04, 0x04, 0x0E], // 1
    [0x0E, 0x11, 0x01, 0x02, 0x04, 0x08, 0x1F], // 2
    [0x1F, 0x02, 0x04, 0x02, 0x01, 0x11, 0x0E], // 3
    [0x02, 0x06, 0x0A, 0x12, 0x1F, 0x02, 0x02], // 4
    [0x1F, 0x10, 0x1E, 0x01, 0x01, 0x11, 0x0E], // 5
    [0x06, 0x08, 0x10, 0x1E, 0x11, 0x11, 0x0E], // 6
    [0x1F, 0x01, 0x02, 0x04, 0x08, 0x08, 0x08], // 7
    [0x0E, 0x11, 0x11, 0x0E, 0x11, 0x11, 0x0E], // 8
    [0x0E, 0x11, 0x11, 0x0F, 0x01, 0x02, 0x0C], // 9
    [0x00, 0x0C, 0x0C, 0x00, 0x0C, 0x0C, 0x00], // :
    [0x00, 0x0C, 0x0C, 0x00, 0x0C, 0x04, 0x08], // ;
    [0x02, 0x04, 0x08, 0x10, 0x08, 0x04, 0x02], // <
    [0x00, 0x00, 0x1F, 0x00, 0x1F, 0x00, 0x00], // =
    [0x08, 0x04, 0x02, 0x01, 0x02, 0x04, 0x08], // >
    [0x0E, 0x11, 0x01, 0x02, 0x04, 0x00, 0x04], // ?
    [0x0E, 0x11, 0x01, 0x0D, 0x15, 0x15, 0x0E], // @
    [0x0E, 0x11, 0x11, 0x11, 0x1F, 0x11, 0x11], // A
    [0x1E, 0x11, 0x11, 0x1E, 0x11, 0x11, 0x1E], // B
    [0x0E, 0x11, 0x10, 0x10, 0x10, 0x11, 0x0E], // C
    [0x1C, 0x12, 0x11, 0x11, 0x11, 0x12, 0x1C], // D
    [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x1F], // E
    [0x1F, 0x10, 0x10, 0x1E, 0x10, 0x10, 0x10], // F
    [0x0E, 0x11, 0x10, 0x17, 0x11, 0x11, 0x0F], // G
    [0x11, 0x11, 0x11, 0x1F, 0x11, 0x11, 0x11], // H
    [0x0E, 0x04, 0x04, 0x04, 0x04, 0x04, 0x0E], // I
    [0x07, 0x02, 0x02, 0x02, 0x02, 0x12, 0x0C], // J
    [0x11, 0x12, 0x14, 0x18, 0x14, 0x12, 0x11], // K
    [0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x1F], // L
    [0x11, 0x1B, 0x15, 0x15, 0x11, 0x11, 0x11], // M
    [0x11, 0x11, 0x19, 0x15, 0x13, 0x11, 0x11], // N
    [0x0E, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E], // O
    [0x1E, 0x11, 0x11, 0x1E, 0x10, 0x10, 0x10], // P
    [0x0E, 0x11, 0x11, 0x11, 0x15, 0x12, 0x0D], // Q
    [0x1E, 0x11, 0x11, 0x1E, 0x14, 0x12, 0x11], // R
    [0x0F, 0x10, 0x10, 0x0E, 0x01, 0x01, 0x1E], // S
    [0x1F, 0x04, 0x04, 0x04, 0x04, 0x04, 0x04], // T
    [0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x0E], // U
    [0x11, 0x11, 0x11, 0x11, 0x11, 0x0A, 0x04], // V
    [0x11, 0x11, 0x11, 0x15, 0x15, 0x15, 0x0A], // W
    [0x11, 0x11, 0x0A, 0x04, 0x0A, 0x11, 0x11], // X
    [0x11, 0x11, 0x11, 0x0A, 0x04, 0x04, 0x04], // Y
    [0x1F, 0x01, 0x02, 0x04, 0x08, 0x10, 0x1F], // Z
    [0x0E, 0x08, 0x08, 0x08, 0x08, 0x08, 0x0E], // [
    [0x00, 0x10, 0x08, 0x04, 0x02, 0x01, 0x00], // backslash
    [0x0E, 0x02, 0x02, 0x02, 0x02, 0x02, 0x0E], // ]
    [0x04, 0x0A, 0x11, 0x00, 0x00, 0x00, 0x00], // ^
    [0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x1F], // _
];

fn glyph(c: char) -> Option<&'static [u8; 7]> {
    let c = c.to_ascii_uppercase();
    let i = (c as u32).checked_sub(0x20)?;
    FONT.get(i as usize)
}

/// Whether the built-in font can draw `c`.
pub fn font_supports(c: char) -> bool {
    glyph(c).is_some()
}

/// The pixel width of `text` drawn at `scale`.
pub fn text_width(text: &str, scale: u32) -> u32 {
    let n = text.chars().count() as u32;
    if n == 0 {
        0
    } else {
        (n * ADVANCE - (ADVANCE - GLYPH_W)) * scale
    }
}

/// Parses `#rrggbb`.
pub fn parse_colour(s: &str) -> Option<[u8; 3]> {
    let hex = s.strip_prefix('#')?;
    if hex.len() != 6 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let v = u32::from_str_radix(hex, 16).ok()?;
    Some([(v >> 16) as u8, (v >> 8) as u8, v as u8])
}

/// An indexed-colour canvas.
struct Canvas {
    w: i64,
    h: i64,
    px: Vec<u8>,
    palette: Vec<[u8; 3]>,
}

impl Canvas {
    /// The palette index of a colour, added on first use. Validation keeps drawings
    /// within [`MAX_COLOURS`]; beyond that (unvalidated input) the last entry is reused
    /// rather than failing, so rendering stays total.
    fn index(&mut self, colour: &str) -> u8 {
        let rgb = parse_colour(colour).unwrap_or([0, 0, 0]);
        if let Some(i) = self.palette.iter().position(|c| *c == rgb) {
            return i as u8;
        }
        if self.palette.len() < MAX_COLOURS {
            self.palette.push(rgb);
        }
        (self.palette.len() - 1) as u8
    }

    fn fill(&mut self, x0: i64, y0: i64, x1: i64, y1: i64, c: u8) {
        let (x0, x1) = (x0.max(0), x1.min(self.w));
        let (y0, y1) = (y0.max(0), y1.min(self.h));
        if x0 >= x1 {
            return;
        }
        for y in y0..y1 {
            let row = (y * self.w) as usize;
            self.px[row + x0 as usize..row + x1 as usize].fill(c);
        }
    }

    fn paint(&mut self, shape: &Shape) {
        match shape {
            Shape::Rect(x, y, w, h, fill) => {
                let c = self.index(fill);
                let (x, y) = (i64::from(*x), i64::from(*y));
                self.fill(x, y, x + i64::from(*w), y + i64::from(*h), c);
            }
            Shape::Line(x1, y1, x2, y2, thickness, colour) => {
                let c = self.index(colour);
                let t = i64::from((*thickness).max(1));
                let off = (t - 1) / 2;
                // Bresenham over the centre line, stamping a t x t square per step.
                let (mut x, mut y) = (i64::from(*x1), i64::from(*y1));
                let (x2, y2) = (i64::from(*x2), i64::from(*y2));
                let (dx, dy) = ((x2 - x).abs(), -(y2 - y).abs());
                let (sx, sy) = (if x < x2 { 1 } else { -1 }, if y < y2 { 1 } else { -1 });
                let mut err = dx + dy;
                loop {
                    self.fill(x - off, y - off, x - off + t, y - off + t, c);
                    if x == x2 && y == y2 {
                        break;
                    }
                    let e2 = 2 * err;
                    if e2 >= dy {
                        err += dy;
                        x += sx;
                    }
                    if e2 <= dx {
                        err += dx;
                        y += sy;
                    }
                }
            }
            Shape::Disc(cx, cy, r, fill) => {
                let c = self.index(fill);
                let (cx, cy, r) = (i64::from(*cx), i64::from(*cy), i64::from(*r));
                // r^2 + r rounds the rim: small discs look round, not diamond-shaped.
                let lim = r * r + r;
                // Only rows on the canvas are visited; each row's half-width is the
                // exact integer square root, so the cost is bounded by the canvas.
                for y in (cy - r).max(0)..=(cy + r).min(self.h - 1) {
                    let rest = lim - (y - cy) * (y - cy);
                    let mut half = (rest as f64).sqrt() as i64;
                    while half * half > rest {
                        half -= 1;
                    }
                    while (half + 1) * (half + 1) <= rest {
                        half += 1;
                    }
                    self.fill(cx - half, y, cx + half + 1, y + 1, c);
                }
            }
            Shape::Text(x, y, scale, colour, text) => {
                let c = self.index(colour);
                let s = i64::from((*scale).max(1));
                let (mut gx, gy) = (i64::from(*x), i64::from(*y));
                for ch in text.chars() {
                    if let Some(rows) = glyph(ch) {
                        for (ry, bits) in rows.iter().enumerate() {
                            for rx in 0..GLYPH_W {
                                if bits & (0x10 >> rx) != 0 {
                                    let px = gx + i64::from(rx) * s;
                                    let py = gy + ry as i64 * s;
                                    self.fill(px, py, px + s, py + s, c);
                                }
                            }
                        }
                    }
                    gx += i64::from(ADVANCE) * s;
                }
            }
        }
    }
}

/// Renders a drawing to PNG bytes.
impl Drawing {
    /// The PNG this drawing renders to (the bytes an agent's `read_file` returns).
    pub fn png(&self) -> Vec<u8> {
        png(self)
    }
}

/// Renders `d` (see [`Drawing::png`]).
pub fn png(d: &Drawing) -> Vec<u8> {
    let w = d.width.clamp(1, MAX_SIDE);
    let h = d.height.clamp(1, MAX_SIDE);
    let mut canvas = Canvas {
        w: i64::from(w),
        h: i64::from(h),
        px: Vec::new(),
        palette: Vec::new(),
    };
    let bg = canvas.index(&d.background);
    canvas.px = vec![bg; (w * h) as usize];
    for s in &d.shapes {
        canvas.paint(s);
    }
    encode_indexed(w, h, &canvas.palette, &canvas.px)
}

fn chunk(out: &mut Vec<u8>, kind: &[u8; 4], data: &[u8]) {
    out.extend_from_slice(&(data.len() as u32).to_be_bytes());
    let start = out.len();
    out.extend_from_slice(kind);
    out.extend_from_slice(data);
    let crc = crc32(&out[start..]);
    out.extend_from_slice(&crc.to_be_bytes());
}

/// PNG bytes for an indexed image (`px` holds `w * h` palette indices), packed at the
/// smallest bit depth the palette allows (1, 2, 4 or 8 bits per pixel).
fn encode_indexed(w: u32, h: u32, palette: &[[u8; 3]], px: &[u8]) -> Vec<u8> {
    let depth: usize = match palette.len() {
        0..=2 => 1,
        3..=4 => 2,
        5..=16 => 4,
        _ => 8,
    };
    let per_byte = 8 / depth;
    let row_bytes = (w as usize).div_ceil(per_byte);
    let stride = row_bytes + 1;
    let mut raw = vec![0u8; stride * h as usize];
    let w = w as usize;
    for y in 0..h as usize {
        // Byte 0 of each row is the filter type, None (0).
        let src = &px[y * w..(y + 1) * w];
        if depth == 8 {
            raw[y * stride + 1..(y + 1) * stride].copy_from_slice(src);
            continue;
        }
        // A row equal to the one above packs the same: copy it (most rows of a chart).
        if y > 0 && src == &px[(y - 1) * w..y * w] {
            raw.copy_within((y - 1) * stride..y * stride, y * stride);
            continue;
        }
        let dst = &mut raw[y * stride + 1..(y + 1) * stride];
        // The leftmost pixel goes in the most significant bits.
        for x in 0..w {
            dst[x / per_byte] |= src[x] << (8 - depth * (x % per_byte + 1));
        }
    }
    let mut out = b"\x89PNG\r\n\x1a\n".to_vec();
    let mut ihdr = Vec::with_capacity(13);
    ihdr.extend_from_slice(&(w as u32).to_be_bytes());
    ihdr.extend_from_slice(&h.to_be_bytes());
    ihdr.extend_from_slice(&[depth as u8, 3, 0, 0, 0]); // indexed, deflate, filter 0, no interlace
    chunk(&mut out, b"IHDR", &ihdr);
    let plte: Vec<u8> = palette.iter().flatten().copied().collect();
    chunk(&mut out, b"PLTE", &plte);
    chunk(&mut out, b"IDAT", &zlib(&raw, stride));
    chunk(&mut out, b"IEND", &[]);
    out
}

/// The CRC-32 lookup table, built at compile time.
const CRC_TABLE: [u32; 256] = {
    let mut t = [0u32; 256];
    let mut n = 0;
    while n < 256 {
        let mut c = n as u32;
        let mut k = 0;
        while k < 8 {
            c = if c & 1 != 0 {
                (c >> 1) ^ 0xEDB8_8320
            } else {
                c >> 1
            };
            k += 1;
        }
        t[n] = c;
        n += 1;
    }
    t
};

/// CRC-32 (ISO-HDLC, as PNG uses).
pub fn crc32(data: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &b in data {
        crc = CRC_TABLE[((crc ^ u32::from(b)) & 0xFF) as usize] ^ (crc >> 8);
    }
    !crc
}

/// Adler-32, as zlib uses.
#[cfg(test)]
fn adler32(data: &[u8]) -> u32 {
    adler32_rows(data, data.len().max(1))
}

/// Adler-32 of `data` read as rows of `stride` bytes. A row equal to the one before
/// reuses that row's sums, which makes flat images cheap to checksum.
fn adler32_rows(data: &[u8], stride: usize) -> u32 {
    const M: u64 = 65_521;
    let (mut a, mut b) = (1u64, 0u64);
    // The previous row's (sum of bytes, sum of bytes weighted by distance to its end).
    let mut sums = (0u64, 0u64);
    let mut prev: &[u8] = &[];
    for row in data.chunks(stride) {
        if row != prev {
            let n = row.len() as u64;
            let (mut s1, mut s2) = (0u64, 0u64);
            for (k, &x) in row.iter().enumerate() {
                s1 += u64::from(x);
                s2 += (n - k as u64) * u64::from(x);
            }
            sums = (s1 % M, s2 % M);
            prev = row;
        }
        // Feeding a row of n bytes to (a, b): a += s1, b += n * a + s2.
        b = (b + row.len() as u64 % M * a + sums.1) % M;
        a = (a + sums.0) % M;
    }
    ((b << 16) | a) as u32
}

/// Writes bits least-significant first, as deflate requires.
struct Bits {
    out: Vec<u8>,
    acc: u64,
    n: u32,
}

impl Bits {
    fn put(&mut self, value: u32, count: u32) {
        self.acc |= u64::from(value) << self.n;
        self.n += count;
        while self.n >= 8 {
            self.out.push(self.acc as u8);
            self.acc >>= 8;
            self.n -= 8;
        }
    }
    /// Huffman codes are defined most-significant bit first.
    fn code(&mut self, code: u32, len: u32) {
        let rev = code.reverse_bits() >> (32 - len);
        self.put(rev, len);
    }
    fn finish(mut self) -> Vec<u8> {
        if self.n > 0 {
            self.out.push(self.acc as u8);
        }
        self.out
    }
}

const LEN_BASE: [u16; 29] = [
    3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115, 131,
    163, 195, 227, 258,
];
const LEN_EXTRA: [u8; 29] = [
    0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
];
const DIST_BASE: [u16; 30] = [
    1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
    2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
];
const DIST_EXTRA: [u8; 30] = [
    0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13,
    13,
];

/// A literal/length symbol in the fixed Huffman code (RFC 1951 §3.2.6).
fn symbol(bits: &mut Bits, sym: u32) {
    match sym {
        0..=143 => bits.code(0x30 + sym, 8),
        144..=255 => bits.code(0x190 + sym - 144, 9),
        256..=279 => bits.code(sym - 256, 7),
        _ => bits.code(0xC0 + sym - 280, 8),
    }
}

/// The last table index whose base is at most `v`.
fn bucket(base: &[u16], v: usize) -> usize {
    base.iter().rposition(|&b| usize::from(b) <= v).unwrap_or(0)
}

/// Length code index for every match length 0..=258 (entries below 3 unused).
const LEN_INDEX: [u8; 259] = {
    let mut t = [0u8; 259];
    let mut len = 3;
    while len <= 258 {
        let mut i = 28;
        while LEN_BASE[i] as usize > len {
            i -= 1;
        }
        t[len] = i as u8;
        len += 1;
    }
    t
};

/// Deflate with one fixed-Huffman block; matches only at distance 1 and `stride`.
fn deflate(data: &[u8], stride: usize) -> Vec<u8> {
    let mut bits = Bits {
        out: Vec::new(),
        acc: 0,
        n: 0,
    };
    bits.put(1, 1); // BFINAL
    bits.put(1, 2); // BTYPE = 01, fixed Huffman
    let run = |i: usize, dist: usize| -> usize {
        if dist == 0 || dist > i || dist > 32_768 {
            return 0;
        }
        let max = (data.len() - i).min(258);
        let (a, b) = (&data[i..i + max], &data[i - dist..i - dist + max]);
        if a[0] != b[0] {
            return 0;
        }
        if a == b {
            return max;
        }
        // Longest equal prefix: 16-byte slice comparisons (memcmp, fast even in
        // debug builds), then byte by byte inside the first differing block.
        let mut k = 0;
        while k + 16 <= max && a[k..k + 16] == b[k..k + 16] {
            k += 16;
        }
        while k < max && a[k] == b[k] {
            k += 1;
        }
        k
    };
    // Only two distances occur, so their codes are looked up once.
    let (d1, ds) = (
        bucket(&DIST_BASE, 1),
        bucket(&DIST_BASE, stride.min(32_768)),
    );
    let mut i = 0;
    while i < data.len() {
        let (l1, ls) = (run(i, 1), run(i, stride));
        let (len, dist) = if ls > l1 { (ls, stride) } else { (l1, 1) };
        if len >= 3 {
            let li = usize::from(LEN_INDEX[len]);
            symbol(&mut bits, 257 + li as u32);
            bits.put(
                (len - usize::from(LEN_BASE[li])) as u32,
                u32::from(LEN_EXTRA[li]),
            );
            let di = if dist == 1 { d1 } else { ds };
            bits.code(di as u32, 5);
            bits.put(
                (dist - usize::from(DIST_BASE[di])) as u32,
                u32::from(DIST_EXTRA[di]),
            );
            i += len;
        } else {
            symbol(&mut bits, u32::from(data[i]));
            i += 1;
        }
    }
    symbol(&mut bits, 256); // end of block
    bits.finish()
}

fn zlib(data: &[u8], stride: usize) -> Vec<u8> {
    // CMF 0x78: deflate with a 32 KiB window; FLG 0x01 makes CMF*256+FLG a multiple of 31.
    let mut out = vec![0x78, 0x01];
    out.extend(deflate(data, stride));
    out.extend_from_slice(&adler32_rows(data, stride).to_be_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A minimal inflate for fixed-Huffman and stored blocks: enough to prove that
    /// what we write decodes to what we meant.
    fn inflate(data: &[u8]) -> Vec<u8> {
        struct R<'a> {
            d: &'a [u8],
            pos: usize,
        }
        impl R<'_> {
            fn bit(&mut self) -> u32 {
                let b = (self.d[self.pos / 8] >> (self.pos % 8)) & 1;
                self.pos += 1;
                u32::from(b)
            }
            fn bits(&mut self, n: u32) -> u32 {
                (0..n).map(|i| self.bit() << i).sum()
            }
            fn msb(&mut self, n: u32) -> u32 {
                (0..n).fold(0, |acc, _| (acc << 1) | self.bit())
            }
        }
        let mut r = R { d: data, pos: 0 };
        let mut out: Vec<u8> = Vec::new();
        loop {
            let last = r.bit();
            match r.bits(2) {
                0 => {
                    r.pos = r.pos.div_ceil(8) * 8;
                    let len = r.bits(16) as usize;
                    r.bits(16);
                    for _ in 0..len {
                        out.push(r.bits(8) as u8);
                    }
                }
                1 => loop {
                    let mut code = r.msb(7);
                    let sym = if code <= 0x17 {
                        code + 256
                    } else {
                        code = (code << 1) | r.bit();
                        if (0x30..=0xBF).contains(&code) {
                            code - 0x30
                        } else if (0xC0..=0xC7).contains(&code) {
                            code - 0xC0 + 280
                        } else {
                            code = (code << 1) | r.bit();
                            code - 0x190 + 144
                        }
                    };
                    match sym {
                        0..=255 => out.push(sym as u8),
                        256 => break,
                        _ => {
                            let li = (sym - 257) as usize;
                            let len = usize::from(LEN_BASE[li])
                                + r.bits(u32::from(LEN_EXTRA[li])) as usize;
                            let di = r.msb(5) as usize;
                            let dist = usize::from(DIST_BASE[di])
                                + r.bits(u32::from(DIST_EXTRA[di])) as usize;
                            for _ in 0..len {
                                out.push(out[out.len() - dist]);
                            }
                        }
                    }
                },
                t => panic!("unsupported block type {t}"),
            }
            if last == 1 {
                return out;
            }
        }
    }

    /// Splits a PNG into (type, data) chunks, checking every CRC.
    fn chunks(png: &[u8]) -> Vec<(String, Vec<u8>)> {
        assert_eq!(&png[..8], b"\x89PNG\r\n\x1a\n");
        let mut out = Vec::new();
        let mut i = 8;
        while i < png.len() {
            let len = u32::from_be_bytes(png[i..i + 4].try_into().unwrap()) as usize;
            let body = &png[i + 4..i + 8 + len];
            let crc = u32::from_be_bytes(png[i + 8 + len..i + 12 + len].try_into().unwrap());
            assert_eq!(crc32(body), crc, "chunk CRC");
            out.push((
                String::from_utf8(body[..4].to_vec()).unwrap(),
                body[4..].to_vec(),
            ));
            i += 12 + len;
        }
        out
    }

    /// Decodes one of our PNGs to (width, height, rgb rows).
    fn decode(png: &[u8]) -> (u32, u32, Vec<[u8; 3]>) {
        let cs = chunks(png);
        let kinds: Vec<&str> = cs.iter().map(|c| c.0.as_str()).collect();
        assert_eq!(kinds, ["IHDR", "PLTE", "IDAT", "IEND"]);
        let ihdr = &cs[0].1;
        let w = u32::from_be_bytes(ihdr[0..4].try_into().unwrap());
        let h = u32::from_be_bytes(ihdr[4..8].try_into().unwrap());
        let depth = usize::from(ihdr[8]);
        assert_eq!(&ihdr[9..], &[3, 0, 0, 0]);
        let pal: Vec<[u8; 3]> = cs[1].1.chunks(3).map(|c| [c[0], c[1], c[2]]).collect();
        let z = &cs[2].1;
        assert_eq!((u16::from(z[0]) << 8 | u16::from(z[1])) % 31, 0);
        let raw = inflate(&z[2..z.len() - 4]);
        assert_eq!(
            adler32(&raw).to_be_bytes(),
            z[z.len() - 4..],
            "zlib checksum"
        );
        let row_bytes = (w as usize * depth).div_ceil(8);
        assert_eq!(raw.len(), (row_bytes + 1) * h as usize);
        let mut px = Vec::new();
        for row in raw.chunks(row_bytes + 1) {
            assert_eq!(row[0], 0, "filter byte");
            for x in 0..w as usize {
                let bit = x * depth;
                let v = (row[1 + bit / 8] >> (8 - depth - bit % 8)) & ((1u16 << depth) - 1) as u8;
                px.push(pal[usize::from(v)]);
            }
        }
        (w, h, px)
    }

    fn reference() -> Drawing {
        Drawing {
            width: 96,
            height: 64,
            background: "#ffffff".into(),
            shapes: vec![
                Shape::Rect(4, 4, 40, 24, "#fde0c5".into()),
                Shape::Rect(60, -10, 100, 20, "#d7301f".into()),
                Shape::Line(2, 60, 90, 34, 3, "#2b6cb0".into()),
                Shape::Disc(70, 45, 9, "#38a169".into()),
                Shape::Text(6, 10, 2, "#111111".into(), "Ab3".into()),
                Shape::Text(50, 2, 1, "#111111".into(), "GRID_I 0-9".into()),
            ],
        }
    }

    #[test]
    fn checksums_match_their_standards() {
        let data: Vec<u8> = (0..50_000u32)
            .map(|i| (i % 7 * 37 + i / 1000) as u8)
            .collect();
        for stride in [1, 3, 100, 7_000, 60_000] {
            assert_eq!(
                adler32_rows(&data, stride),
                adler32(&data),
                "stride {stride}"
            );
        }
        let flat = vec![200u8; 30_000];
        assert_eq!(adler32_rows(&flat, 301), adler32_rows(&flat, 30_000));
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        assert_eq!(crc32(b""), 0);
        assert_eq!(adler32(b"Wikipedia"), 0x11E6_0398);
        assert_eq!(adler32(&vec![0xFF; 100_000]), {
            let (mut a, mut b) = (1u64, 0u64);
            for _ in 0..100_000 {
                a = (a + 255) % 65_521;
                b = (b + a) % 65_521;
            }
            ((b << 16) | a) as u32
        });
    }

    #[test]
    fn deflate_round_trips_every_kind_of_repeat() {
        let mut data = Vec::new();
        for i in 0..3000u32 {
            data.push((i * 7 % 251) as u8);
        }
        data.extend(std::iter::repeat_n(9u8, 1000));
        let copy = data[100..700].to_vec();
        data.extend(copy);
        for stride in [1, 2, 5, 301, 4000] {
            assert_eq!(inflate(&deflate(&data, stride)), data, "stride {stride}");
        }
        assert_eq!(inflate(&deflate(&[], 3)), Vec::<u8>::new());
        assert_eq!(inflate(&deflate(&[1, 2], 3)), vec![1, 2]);
    }

    #[test]
    fn drawings_decode_to_the_painted_pixels() {
        let (w, h, px) = decode(&png(&reference()));
        assert_eq!((w, h), (96, 64));
        let at = |x: usize, y: usize| px[y * w as usize + x];
        assert_eq!(at(0, 0), [0xff, 0xff, 0xff], "background");
        assert_eq!(at(40, 25), [0xfd, 0xe0, 0xc5], "rect");
        assert_eq!(
            at(95, 5),
            [0xd7, 0x30, 0x1f],
            "rect clipped at the top and right"
        );
        assert_eq!(at(70, 45), [0x38, 0xa1, 0x69], "disc centre");
        assert_eq!(at(79, 45), [0x38, 0xa1, 0x69], "disc rim");
        assert_eq!(at(79, 54), [0xff, 0xff, 0xff], "outside the disc");
        assert_eq!(at(2, 60), [0x2b, 0x6c, 0xb0], "line start");
        // 'A' at (6, 10), scale 2: its top row is .###. so (6,10) is empty, (8,10) inked.
        assert_eq!(at(6, 10), [0xfd, 0xe0, 0xc5]);
        assert_eq!(at(8, 10), [0x11, 0x11, 0x11]);
        // 'b' is drawn as 'B': the first column of every row is inked.
        assert!((0..14).all(|y| at(18, 10 + y) == [0x11, 0x11, 0x11]));
    }

    #[test]
    fn the_reference_drawing_has_pinned_bytes() {
        let bytes = png(&reference());
        assert_eq!(bytes, png(&reference()), "same recipe, same bytes");
        assert_eq!(
            blake3::hash(&bytes).to_hex().to_string(),
            "ec7049830daf37f169442080a57b621b94ec07f23305ddedda8e885789c5f154",
            "the renderer's output changed; if on purpose, update the pin"
        );
    }

    #[test]
    fn every_bit_depth_decodes_at_odd_widths() {
        for colours in [1usize, 2, 3, 4, 5, 16, 17, 200] {
            let d = Drawing {
                width: 13,
                height: 5,
                background: "#000000".into(),
                shapes: (1..colours)
                    .map(|c| {
                        Shape::Rect(
                            (c % 13) as i32,
                            (c / 13 % 5) as i32,
                            1,
                            1,
                            format!("#{:06x}", c * 3),
                        )
                    })
                    .collect(),
            };
            let (w, h, px) = decode(&png(&d));
            assert_eq!((w, h), (13, 5));
            // Later rects overwrite earlier ones at the same pixel (every 65).
            for c in colours.saturating_sub(65).max(1)..colours {
                let v = (c * 3) as u32;
                assert_eq!(
                    px[(c / 13 % 5) * 13 + c % 13],
                    [(v >> 16) as u8, (v >> 8) as u8, v as u8],
                    "{colours} colours, pixel {c}"
                );
            }
            if colours <= 65 {
                assert_eq!(px[0], [0, 0, 0], "background");
            }
        }
    }

    #[test]
    fn huge_shapes_are_clipped_cheaply() {
        let d = Drawing {
            width: 20,
            height: 10,
            background: "#ffffff".into(),
            shapes: vec![
                Shape::Disc(5, 5, 16_384, "#ff0000".into()),
                Shape::Line(-16_384, 3, 16_384, 3, 1, "#00ff00".into()),
                Shape::Rect(-16_384, 8, 40_000, 40_000, "#0000ff".into()),
            ],
        };
        let (_, _, px) = decode(&png(&d));
        assert_eq!(px[0], [0xff, 0, 0]);
        assert_eq!(px[3 * 20 + 19], [0, 0xff, 0]);
        assert_eq!(px[9 * 20 + 10], [0, 0, 0xff]);
    }

    #[test]
    fn large_flat_images_stay_small() {
        let d = Drawing {
            width: 900,
            height: 700,
            background: "#ffffff".into(),
            shapes: (0..18)
                .flat_map(|i| {
                    (0..18).map(move |j| {
                        Shape::Rect(
                            60 + i * 40,
                            20 + j * 36,
                            40,
                            36,
                            format!("#ff{:02x}00", i * 10),
                        )
                    })
                })
                .collect(),
        };
        let bytes = png(&d);
        assert!(bytes.len() < 60_000, "{} bytes", bytes.len());
        let (w, h, _) = decode(&bytes);
        assert_eq!((w, h), (900, 700));
    }

    #[test]
    fn the_font_covers_what_it_claims() {
        for c in (' '..='_').chain('a'..='z') {
            assert!(font_supports(c), "{c}");
        }
        for c in ['{', '~', '\u{b7}', '\u{e9}', '\n'] {
            assert!(!font_supports(c), "{c:?}");
        }
        assert_eq!(text_width("", 2), 0);
        assert_eq!(text_width("AB", 1), 11);
        assert_eq!(text_width("AB", 3), 33);
        assert_eq!(parse_colour("#0a0B0c"), Some([10, 11, 12]));
        for bad in ["0a0b0c", "#0a0b0", "#0a0b0cc", "#gg0000", "red"] {
            assert_eq!(parse_colour(bad), None, "{bad}");
        }
    }
}
