//! ADs strategy: ask Marketing for the files and the handbook, read the density of
//! every channel's cell off the audience group's heatmap picture, and solve the
//! 0/1 knapsack exactly.
//!
//! The heatmap is read the way a person reads it: the PNG is decoded, the grey grid
//! lines give the cells, and each cell's printed number is recognised by comparing
//! its ink with the renderer's digit glyphs (taken from a digit strip the renderer
//! draws, as anyone could learn the font from a sample).

use base64::Engine as _;
use serde_json::json;

use super::{Brief, Cx, Incoming, Job, Next, file_text, paths_about};
use tbsim_core::protocol::ToolResult;

/// The heatmaps' grid-line grey.
const GRID: [u8; 3] = [0x8a, 0x8a, 0x8a];

/// A decoded image: width, height, RGB pixels row by row.
pub(crate) struct Image {
    w: usize,
    h: usize,
    px: Vec<[u8; 3]>,
}

impl Image {
    fn at(&self, x: usize, y: usize) -> [u8; 3] {
        self.px[y * self.w + x]
    }
}

/// Inflate (RFC 1951): stored, fixed and dynamic Huffman blocks.
mod inflate {
    struct Bits<'a> {
        data: &'a [u8],
        pos: usize,
        bit: u32,
    }

    impl Bits<'_> {
        fn get(&mut self, n: u32) -> Option<u32> {
            let mut v = 0;
            for k in 0..n {
                let byte = *self.data.get(self.pos)?;
                v |= u32::from((byte >> self.bit) & 1) << k;
                self.bit += 1;
                if self.bit == 8 {
                    self.bit = 0;
                    self.pos += 1;
                }
            }
            Some(v)
        }
    }

    /// Canonical Huffman decoding table: (counts per length, symbols by code).
    struct Huff {
        counts: [u16; 16],
        symbols: Vec<u16>,
    }

    impl Huff {
        fn new(lengths: &[u8]) -> Huff {
            let mut counts = [0u16; 16];
            for &l in lengths {
                counts[usize::from(l)] += 1;
            }
            counts[0] = 0;
            let mut offs = [0u16; 16];
            for l in 1..16 {
                offs[l] = offs[l - 1] + counts[l - 1];
            }
            let mut symbols = vec![0u16; lengths.len()];
            for (s, &l) in lengths.iter().enumerate() {
                if l != 0 {
                    symbols[usize::from(offs[usize::from(l)])] = s as u16;
                    offs[usize::from(l)] += 1;
                }
            }
            Huff { counts, symbols }
        }

        fn decode(&self, b: &mut Bits<'_>) -> Option<u16> {
            let (mut code, mut first, mut index) = (0i32, 0i32, 0i32);
            for l in 1..16 {
                code |= b.get(1)? as i32;
                let count = i32::from(self.counts[l]);
                if code - count < first {
                    return self.symbols.get((index + code - first) as usize).copied();
                }
                index += count;
                first = (first + count) << 1;
                code <<= 1;
            }
            None
        }
    }

    const LEN_BASE: [u16; 29] = [
        3, 4, 5, 6, 7, 8, 9, 10, 11, 13, 15, 17, 19, 23, 27, 31, 35, 43, 51, 59, 67, 83, 99, 115,
        131, 163, 195, 227, 258,
    ];
    const LEN_EXTRA: [u8; 29] = [
        0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0,
    ];
    const DIST_BASE: [u16; 30] = [
        1, 2, 3, 4, 5, 7, 9, 13, 17, 25, 33, 49, 65, 97, 129, 193, 257, 385, 513, 769, 1025, 1537,
        2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577,
    ];
    const DIST_EXTRA: [u8; 30] = [
        0, 0, 0, 0, 1, 1, 2, 2, 3, 3, 4, 4, 5, 5, 6, 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12,
        13, 13,
    ];

    fn block(b: &mut Bits<'_>, out: &mut Vec<u8>, lit: &Huff, dist: &Huff) -> Option<()> {
        loop {
            let s = lit.decode(b)?;
            match s {
                0..=255 => out.push(s as u8),
                256 => return Some(()),
                _ => {
                    let i = usize::from(s - 257);
                    let len =
                        usize::from(*LEN_BASE.get(i)?) + b.get(u32::from(LEN_EXTRA[i]))? as usize;
                    let d = usize::from(dist.decode(b)?);
                    let back = usize::from(*DIST_BASE.get(d)?)
                        + b.get(u32::from(*DIST_EXTRA.get(d)?))? as usize;
                    let start = out.len().checked_sub(back)?;
                    for k in 0..len {
                        let v = out[start + k];
                        out.push(v);
                    }
                }
            }
        }
    }

    /// The inflated bytes of a raw deflate stream.
    pub fn inflate(data: &[u8]) -> Option<Vec<u8>> {
        let mut b = Bits {
            data,
            pos: 0,
            bit: 0,
        };
        let mut out = Vec::new();
        loop {
            let last = b.get(1)?;
            match b.get(2)? {
                0 => {
                    if b.bit != 0 {
                        b.bit = 0;
                        b.pos += 1;
                    }
                    let d = b.data.get(b.pos..b.pos + 4)?;
                    let len = usize::from(u16::from_le_bytes([d[0], d[1]]));
                    b.pos += 4;
                    out.extend_from_slice(b.data.get(b.pos..b.pos + len)?);
                    b.pos += len;
                }
                1 => {
                    let mut l = [8u8; 288];
                    l[144..256].fill(9);
                    l[256..280].fill(7);
                    block(&mut b, &mut out, &Huff::new(&l), &Huff::new(&[5u8; 30]))?;
                }
                2 => {
                    let hlit = b.get(5)? as usize + 257;
                    let hdist = b.get(5)? as usize + 1;
                    let hclen = b.get(4)? as usize + 4;
                    const ORDER: [usize; 19] = [
                        16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15,
                    ];
                    let mut cl = [0u8; 19];
                    for &o in ORDER.iter().take(hclen) {
                        cl[o] = b.get(3)? as u8;
                    }
                    let ch = Huff::new(&cl);
                    let mut lens = Vec::with_capacity(hlit + hdist);
                    while lens.len() < hlit + hdist {
                        match ch.decode(&mut b)? {
                            s @ 0..=15 => lens.push(s as u8),
                            16 => {
                                let prev = *lens.last()?;
                                for _ in 0..3 + b.get(2)? {
                                    lens.push(prev);
                                }
                            }
                            17 => lens.extend(std::iter::repeat_n(0, 3 + b.get(3)? as usize)),
                            _ => lens.extend(std::iter::repeat_n(0, 11 + b.get(7)? as usize)),
                        }
                    }
                    let (ll, dl) = lens.split_at(hlit);
                    block(&mut b, &mut out, &Huff::new(ll), &Huff::new(dl))?;
                }
                _ => return None,
            }
            if last == 1 {
                return Some(out);
            }
        }
    }
}

/// Decodes a non-interlaced 8-bit-or-less indexed or 8-bit RGB PNG.
pub(crate) fn decode_png(bytes: &[u8]) -> Option<Image> {
    if bytes.get(..8)? != b"\x89PNG\r\n\x1a\n" {
        return None;
    }
    let (mut i, mut ihdr, mut plte, mut idat) = (8, Vec::new(), Vec::new(), Vec::new());
    while i + 8 <= bytes.len() {
        let len = u32::from_be_bytes(bytes[i..i + 4].try_into().ok()?) as usize;
        let kind = &bytes[i + 4..i + 8];
        let body = bytes.get(i + 8..i + 8 + len)?;
        match kind {
            b"IHDR" => ihdr = body.to_vec(),
            b"PLTE" => plte = body.to_vec(),
            b"IDAT" => idat.extend_from_slice(body),
            _ => {}
        }
        i += 12 + len;
    }
    let w = u32::from_be_bytes(ihdr.get(0..4)?.try_into().ok()?) as usize;
    let h = u32::from_be_bytes(ihdr.get(4..8)?.try_into().ok()?) as usize;
    let (depth, colour) = (usize::from(*ihdr.get(8)?), *ihdr.get(9)?);
    let raw = inflate::inflate(idat.get(2..)?)?;
    let bpp_bits = match colour {
        3 => depth,
        2 if depth == 8 => 24,
        _ => return None,
    };
    let row = (w * bpp_bits).div_ceil(8);
    let bpp = bpp_bits.div_ceil(8);
    let mut prev = vec![0u8; row];
    let mut px = Vec::with_capacity(w * h);
    for y in 0..h {
        let line = raw.get(y * (row + 1)..(y + 1) * (row + 1))?;
        let mut cur = line[1..].to_vec();
        for x in 0..row {
            let a = if x >= bpp { i32::from(cur[x - bpp]) } else { 0 };
            let b = i32::from(prev[x]);
            let c = if x >= bpp {
                i32::from(prev[x - bpp])
            } else {
                0
            };
            let add = match line[0] {
                0 => 0,
                1 => a,
                2 => b,
                3 => (a + b) / 2,
                4 => {
                    let p = a + b - c;
                    let (pa, pb, pc) = ((p - a).abs(), (p - b).abs(), (p - c).abs());
                    if pa <= pb && pa <= pc {
                        a
                    } else if pb <= pc {
                        b
                    } else {
                        c
                    }
                }
                _ => return None,
            };
            cur[x] = cur[x].wrapping_add(add as u8);
        }
        for x in 0..w {
            px.push(if colour == 3 {
                let bit = x * depth;
                let v = (cur[bit / 8] >> (8 - depth - bit % 8)) & ((1u16 << depth) - 1) as u8;
                let k = usize::from(v) * 3;
                [*plte.get(k)?, *plte.get(k + 1)?, *plte.get(k + 2)?]
            } else {
                [cur[x * 3], cur[x * 3 + 1], cur[x * 3 + 2]]
            });
        }
        prev = cur;
    }
    Some(Image { w, h, px })
}

/// An ink bitmap cropped to its bounding box: (width, height, bits row by row).
type Glyph = (usize, usize, Vec<bool>);

fn crop(ink: impl Fn(usize, usize) -> bool, w: usize, h: usize) -> Option<Glyph> {
    let (mut x0, mut y0, mut x1, mut y1) = (usize::MAX, usize::MAX, 0, 0);
    for y in 0..h {
        for x in 0..w {
            if ink(x, y) {
                (x0, y0, x1, y1) = (x0.min(x), y0.min(y), x1.max(x), y1.max(y));
            }
        }
    }
    if x0 == usize::MAX {
        return None;
    }
    let (gw, gh) = (x1 - x0 + 1, y1 - y0 + 1);
    let mut bits = Vec::with_capacity(gw * gh);
    for y in y0..=y1 {
        for x in x0..=x1 {
            bits.push(ink(x, y));
        }
    }
    Some((gw, gh, bits))
}

/// The digits 0-9 as the renderer draws them at scale 1, cropped.
fn digit_glyphs() -> Vec<Glyph> {
    let text: String = (0..10).map(|d| format!("{d} ")).collect();
    let drawing = tbsim_scenario::Drawing {
        width: 140,
        height: 11,
        background: "#ffffff".into(),
        shapes: vec![tbsim_scenario::Shape::Text(2, 2, 1, "#000000".into(), text)],
    };
    let Some(img) = decode_png(&drawing.png()) else {
        return Vec::new();
    };
    // Each character advances six pixels; with spaces, digit d starts at 2 + 12 d.
    (0..10)
        .filter_map(|d| {
            crop(
                |x, y| img.at(2 + 12 * d + x, y) != [255, 255, 255],
                5,
                img.h,
            )
        })
        .collect()
}

/// Lines of the grid colour at least `min` pixels long: rows (horizontal) or
/// columns (vertical).
fn lines(img: &Image, horizontal: bool, min: usize) -> Vec<usize> {
    let (outer, inner) = if horizontal {
        (img.h, img.w)
    } else {
        (img.w, img.h)
    };
    (0..outer)
        .filter(|&o| {
            let mut run = 0;
            (0..inner).any(|k| {
                let p = if horizontal {
                    img.at(k, o)
                } else {
                    img.at(o, k)
                };
                run = if p == GRID { run + 1 } else { 0 };
                run >= min
            })
        })
        .collect()
}

/// The densities printed in a heatmap, `grid[j][i]` with row 0 at the bottom.
pub(crate) fn read_heatmap(img: &Image) -> Option<Vec<Vec<u8>>> {
    let ys = lines(img, true, 64);
    let xs = lines(img, false, 64);
    if ys.len() < 2 || ys.len() != xs.len() {
        return None;
    }
    let digits = digit_glyphs();
    let n = ys.len() - 1;
    let mut grid = vec![vec![0u8; n]; n];
    for k in 0..n {
        for i in 0..n {
            let (x0, y0) = (xs[i] + 1, ys[k] + 1);
            let (w, h) = (xs[i + 1] - x0, ys[k + 1] - y0);
            // The fill is the commonest colour; the ink is everything else.
            let mut counts: Vec<([u8; 3], usize)> = Vec::new();
            for y in y0..y0 + h {
                for x in x0..x0 + w {
                    let p = img.at(x, y);
                    match counts.iter_mut().find(|c| c.0 == p) {
                        Some(c) => c.1 += 1,
                        None => counts.push((p, 1)),
                    }
                }
            }
            let fill = counts.iter().max_by_key(|c| c.1)?.0;
            let (gw, gh, bits) = crop(|x, y| img.at(x0 + x, y0 + y) != fill, w, h)?;
            let scale = (gh / 7).max(1);
            let (sw, sh) = (gw.div_ceil(scale), gh / scale);
            let small: Vec<bool> = (0..sh)
                .flat_map(|r| (0..sw).map(move |c| (r, c)))
                .map(|(r, c)| bits[r * scale * gw + c * scale])
                .collect();
            let d = digits
                .iter()
                .position(|g| g.0 == sw && g.1 == sh && g.2 == small)?;
            grid[n - 1 - k][i] = d as u8;
        }
    }
    Some(grid)
}

/// Best selection within `cap`: exact 0/1 knapsack over whole cost units, values in
/// cents. Ties keep the earlier channels.
fn knapsack(items: &[(u64, i64)], cap: u64) -> Vec<usize> {
    let cap = cap as usize;
    let n = items.len();
    let mut best = vec![vec![0i64; cap + 1]; n + 1];
    for (k, &(c, v)) in items.iter().enumerate() {
        for b in 0..=cap {
            best[k + 1][b] = best[k][b];
            if (c as usize) <= b {
                best[k + 1][b] = best[k + 1][b].max(best[k][b - c as usize] + v);
            }
        }
    }
    let (mut b, mut out) = (cap, Vec::new());
    for k in (0..n).rev() {
        if best[k + 1][b] != best[k][b] {
            out.push(k);
            b -= items[k].0 as usize;
        }
    }
    out.reverse();
    out
}

#[derive(Debug, Clone, PartialEq, Eq)]
enum Stage {
    Colleagues,
    AskFiles,
    AwaitFiles,
    AskHandbook,
    AwaitHandbook,
    Read(usize),
    ListHeatmaps,
    ReadHeatmap,
    Write,
    Done,
}

#[derive(Debug)]
pub(crate) struct AdsStrategy {
    city: String,
    group: String,
    cap: u64,
    out: String,
    stage: Stage,
    contacts: Vec<(String, String)>,
    contact: usize,
    asks: u32,
    handbook: Option<String>,
    channels: Option<String>,
    heat_dir: Option<String>,
    heatmap: Option<String>,
    csv: String,
    grid: Option<Vec<Vec<u8>>>,
}

pub(crate) fn recognise(b: &Brief) -> Option<Box<dyn Job>> {
    let o = &b.objective;
    let rest = o.strip_prefix("We are running a one-week outdoor ads campaign in ")?;
    let (city, rest) = rest.split_once(" aimed at ")?;
    let group = rest[..rest.find(" (")?].to_owned();
    // The budget, or the overspend limit when Finance allows one.
    let cap = match o.find("CNY in all") {
        Some(i) => o[..i].rsplit('(').next()?.trim().parse().ok()?,
        None => {
            let i = o.find("The total budget is ")? + "The total budget is ".len();
            o[i..].split_whitespace().next()?.parse().ok()?
        }
    };
    let out = o
        .split('`')
        .skip(1)
        .step_by(2)
        .find(|p| p.starts_with("workspace/"))?;
    Some(Box::new(AdsStrategy {
        city: city.to_owned(),
        group,
        cap,
        out: out.to_owned(),
        stage: Stage::Colleagues,
        contacts: Vec::new(),
        contact: 0,
        asks: 0,
        handbook: None,
        channels: None,
        heat_dir: None,
        heatmap: None,
        csv: String::new(),
        grid: None,
    }))
}

impl AdsStrategy {
    fn ask(&mut self, text: String, then: Stage) -> Next {
        let Some((key, name)) = self.contacts.get(self.contact).cloned() else {
            self.stage = Stage::Done;
            return Next::Done;
        };
        self.asks += 1;
        self.stage = then;
        let first = name.split_whitespace().next().unwrap_or(&name).to_owned();
        Next::Call(
            "send_message",
            json!({"to": key, "text": format!("Hi {first}, {text}")}),
        )
    }

    fn reads(&self) -> Vec<String> {
        [&self.handbook, &self.channels]
            .into_iter()
            .flatten()
            .cloned()
            .collect()
    }

    fn plan(&self) -> Option<serde_json::Value> {
        let grid = self.grid.as_ref()?;
        let mut lines = self.csv.lines();
        let header: Vec<&str> = lines.next()?.split(',').collect();
        let col = |n: &str| header.iter().position(|h| *h == n);
        let (ci, cg_i, cg_j, cc, ce, cf) = (
            col("id")?,
            col("grid_i")?,
            col("grid_j")?,
            col("cost")?,
            col("base_effect")?,
            col("audience_fit")?,
        );
        let mut ids = Vec::new();
        let mut items = Vec::new();
        for l in lines {
            let c: Vec<&str> = l.split(',').collect();
            let (i, j): (usize, usize) = (c.get(cg_i)?.parse().ok()?, c.get(cg_j)?.parse().ok()?);
            let d = i64::from(*grid.get(j)?.get(i)?);
            let cost: u64 = c.get(cc)?.parse().ok()?;
            let effect: i64 = c.get(ce)?.parse().ok()?;
            // The fit as whole percent ("0.85" -> 85).
            let fit: i64 = (c.get(cf)?.parse::<f64>().ok()? * 100.0).round() as i64;
            // effect x (0.5 + 0.5 d / 5) x fit, in cents, rounded half up.
            let cents = (effect * (5 + d) * fit + 5) / 10;
            ids.push(c.get(ci)?.to_string());
            items.push((cost, cents));
        }
        let chosen = knapsack(&items, self.cap);
        let cost: u64 = chosen.iter().map(|&k| items[k].0).sum();
        let cents: i64 = chosen.iter().map(|&k| items[k].1).sum();
        Some(json!({
            "selected_channels": chosen.iter().map(|&k| ids[k].clone()).collect::<Vec<_>>(),
            "total_cost": cost,
            "total_exposure": cents as f64 / 100.0,
        }))
    }
}

impl Job for AdsStrategy {
    fn step(&mut self, _cx: &Cx, _last: Option<&ToolResult>) -> Next {
        match self.stage.clone() {
            Stage::Colleagues => Next::Call("list_colleagues", json!({})),
            Stage::AskFiles => {
                let text = format!(
                    "I'm working on the {} outdoor ads campaign. Where are the channel list and the heatmap files?",
                    self.city
                );
                self.ask(text, Stage::AwaitFiles)
            }
            Stage::AskHandbook => self.ask(
                "thanks! And how should I plan the campaign: is there a handbook for choosing the channels?".into(),
                Stage::AwaitHandbook,
            ),
            Stage::AwaitFiles | Stage::AwaitHandbook => Next::Idle,
            Stage::Read(i) => match self.reads().get(i) {
                Some(p) => Next::Call("read_file", json!({"path": p})),
                None => {
                    self.stage = Stage::Done;
                    Next::Done
                }
            },
            Stage::ListHeatmaps => match &self.heat_dir {
                Some(d) => Next::Call("list_folder", json!({"path": d.trim_end_matches('/')})),
                None => {
                    self.stage = Stage::Done;
                    Next::Done
                }
            },
            Stage::ReadHeatmap => match &self.heatmap {
                Some(p) => Next::Call("read_file", json!({"path": p})),
                None => {
                    self.stage = Stage::Done;
                    Next::Done
                }
            },
            Stage::Write => {
                self.stage = Stage::Done;
                match self.plan() {
                    Some(v) => Next::Call(
                        "write_file",
                        json!({"path": self.out, "content": serde_json::to_string_pretty(&v).unwrap_or_default()}),
                    ),
                    None => Next::Done,
                }
            }
            Stage::Done => Next::Done,
        }
    }

    fn on_result(&mut self, r: &ToolResult) {
        match (&self.stage, r.tool.as_str()) {
            (Stage::Colleagues, "list_colleagues") => {
                let list = r
                    .result
                    .as_ref()
                    .and_then(|v| v["colleagues"].as_array().cloned())
                    .unwrap_or_default();
                let mut m: Vec<(bool, String, String)> = list
                    .iter()
                    .filter(|c| c["department"].as_str() == Some("Marketing"))
                    .map(|c| {
                        (
                            c["position"].as_str().unwrap_or("").ends_with("Manager"),
                            c["key"].as_str().unwrap_or("").to_owned(),
                            c["name"].as_str().unwrap_or("").to_owned(),
                        )
                    })
                    .collect();
                m.sort_by_key(|c| c.0);
                self.contacts = m.into_iter().map(|c| (c.1, c.2)).collect();
                self.stage = Stage::AskFiles;
            }
            (Stage::Read(i), "read_file") => {
                if self.reads().get(*i) == self.channels.as_ref()
                    && let Some(t) = file_text(r)
                {
                    self.csv = t.to_owned();
                }
                self.stage = if i + 1 < self.reads().len() {
                    Stage::Read(i + 1)
                } else {
                    Stage::ListHeatmaps
                };
            }
            (Stage::ListHeatmaps, "list_folder") => {
                let want = self.group.to_lowercase().replace(' ', "_");
                let dir = self.heat_dir.clone().unwrap_or_default();
                self.heatmap = r
                    .result
                    .as_ref()
                    .and_then(|v| v["entries"].as_array().cloned())
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|e| e["name"].as_str())
                    .find(|n| n.contains(&want) && n.ends_with(".png"))
                    .map(|n| format!("{}/{n}", dir.trim_end_matches('/')));
                self.stage = Stage::ReadHeatmap;
            }
            (Stage::ReadHeatmap, "read_file") => {
                self.grid = r
                    .attachments
                    .first()
                    .and_then(|a| {
                        base64::engine::general_purpose::STANDARD
                            .decode(&a.data)
                            .ok()
                    })
                    .and_then(|b| decode_png(&b))
                    .and_then(|img| read_heatmap(&img));
                self.stage = Stage::Write;
            }
            _ => {}
        }
    }

    fn on_message(&mut self, m: &Incoming) {
        if self
            .contacts
            .get(self.contact)
            .is_none_or(|c| c.0 != m.from)
        {
            return;
        }
        // First path of each kind, preferring paragraphs about this campaign.
        for p in paths_about(&m.text, &["campaign", "channel", "heatmap"]) {
            if p.ends_with(".md") {
                self.handbook.get_or_insert(p);
            } else if p.ends_with(".csv") {
                self.channels.get_or_insert(p);
            } else if p.ends_with('/') {
                self.heat_dir.get_or_insert(p);
            }
        }
        if !matches!(self.stage, Stage::AwaitFiles | Stage::AwaitHandbook) {
            return;
        }
        let files = self.channels.is_some() && self.heat_dir.is_some();
        self.stage = match (&self.stage, files, self.handbook.is_some()) {
            (_, true, true) => Stage::Read(0),
            (Stage::AwaitFiles, true, false) => Stage::AskHandbook,
            (Stage::AwaitHandbook, _, _) if files => Stage::Read(0),
            (Stage::AwaitFiles | Stage::AwaitHandbook, ..) if self.asks < 4 => {
                // Not what was asked: try the next colleague with the same question.
                self.contact += 1;
                if files {
                    Stage::AskHandbook
                } else {
                    Stage::AskFiles
                }
            }
            (s, ..) => s.clone(),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn knapsack_beats_greedy() {
        // Greedy by ratio takes item 0 (ratio 2) and then nothing fits.
        let items = [(6, 12), (5, 9), (5, 9)];
        assert_eq!(knapsack(&items, 10), vec![1, 2]);
    }

    #[test]
    fn digits_come_from_the_renderer() {
        let g = digit_glyphs();
        assert_eq!(g.len(), 10);
        for (a, ga) in g.iter().enumerate() {
            for gb in &g[a + 1..] {
                assert_ne!(ga, gb, "digits must differ");
            }
        }
    }
}
