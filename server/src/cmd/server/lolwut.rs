//! LOLWUT [VERSION v] [args...]: Redis's computer-art easter egg.
//!
//! Redis picks the art by version: 5 draws Georg Nees's "Schotter" in Braille characters, 6 a
//! city skyline in terminal colours, anything else (the server's own 7.0.15 included) only
//! prints the version line. Schotter's first two rows of squares are not rotated, so a
//! drawing of one or two rows is exactly Redis's; later rows are moved by random amounts,
//! drawn here from the engine's generator (so a seed repeats them). The skyline is redlab's
//! own random drawing in Redis's frame, size and colours (see DIFFERENCES.md).

use super::args;
use crate::cmd::table::CmdResult;
use crate::engine::{Call, Engine};
use crate::reply::Reply;

pub(super) fn lolwut(e: &mut Engine, call: &mut Call) -> CmdResult {
    let mut rest: &[bytes::Bytes] = &call.args[1..];
    let mut version = None;
    if rest.len() >= 2 && args::is(&rest[0], "version") {
        version = Some(args::int(&rest[1])?);
        rest = &rest[2..];
    }
    // Valkey prints its own version (valkey-server 8.1: "Redis ver. 8.1.8").
    let own = e.config.hello_server().1.to_string();
    let text = match version {
        Some(5) => schotter(e, rest, &own)?,
        Some(6) => skyline(e, rest, &own)?,
        _ => format!("Redis ver. {own}\n"),
    };
    Ok(Reply::Verbatim("txt", text.into()))
}

/// The optional numeric arguments, each clamped to `lo..=hi`, with defaults.
fn numbers<const N: usize>(
    rest: &[bytes::Bytes],
    mut values: [i64; N],
    lo: i64,
    hi: i64,
) -> Result<[i64; N], Reply> {
    for (v, a) in values.iter_mut().zip(rest) {
        *v = args::int(a)?;
    }
    Ok(values.map(|v| v.clamp(lo, hi)))
}

/// A black-and-white (or, for the skyline, four-colour) pixel canvas.
struct Canvas {
    width: i64,
    height: i64,
    pixels: Vec<u8>,
}

impl Canvas {
    fn new(width: i64, height: i64, color: u8) -> Canvas {
        Canvas {
            width,
            height,
            pixels: vec![color; (width * height) as usize],
        }
    }

    fn set(&mut self, x: i64, y: i64, color: u8) {
        if (0..self.width).contains(&x) && (0..self.height).contains(&y) {
            self.pixels[(y * self.width + x) as usize] = color;
        }
    }

    fn get(&self, x: i64, y: i64) -> u8 {
        if (0..self.width).contains(&x) && (0..self.height).contains(&y) {
            self.pixels[(y * self.width + x) as usize]
        } else {
            0
        }
    }

    /// Bresenham's line, both ends included.
    fn line(&mut self, (mut x1, mut y1): (i64, i64), (x2, y2): (i64, i64)) {
        let (dx, dy) = ((x2 - x1).abs(), (y2 - y1).abs());
        let (sx, sy) = (if x1 < x2 { 1 } else { -1 }, if y1 < y2 { 1 } else { -1 });
        let mut err = dx - dy;
        loop {
            self.set(x1, y1, 1);
            if x1 == x2 && y1 == y2 {
                break;
            }
            let e2 = err * 2;
            if e2 > -dy {
                err -= dy;
                x1 += sx;
            }
            if e2 < dx {
                err += dx;
                y1 += sy;
            }
        }
    }

    /// A square centred on (x, y) with side `size`, turned by `angle` radians from resting
    /// on a corner.
    fn square(&mut self, x: i64, y: i64, size: f32, angle: f32) {
        // The precision of each step is Redis's (floats stored, doubles computed), so the
        // corners round to the same pixels.
        let size = ((f64::from(size) / 1.4142135623) as f32).round();
        let mut k = (std::f64::consts::FRAC_PI_4 + f64::from(angle)) as f32;
        let mut corners = [(0i64, 0i64); 4];
        for c in &mut corners {
            let k64 = f64::from(k);
            *c = (
                (k64.sin() * f64::from(size) + x as f64).round() as i64,
                (k64.cos() * f64::from(size) + y as f64).round() as i64,
            );
            k = (k64 + std::f64::consts::FRAC_PI_2) as f32;
        }
        for j in 0..4 {
            self.line(corners[j], corners[(j + 1) % 4]);
        }
    }

    /// Two by four pixels per Braille character, one text line per four pixel rows.
    fn braille(&self) -> String {
        let mut out = String::new();
        let mut y = 0;
        while y < self.height {
            let mut x = 0;
            while x < self.width {
                let dots = [
                    (0, 0, 0),
                    (0, 1, 1),
                    (0, 2, 2),
                    (1, 0, 3),
                    (1, 1, 4),
                    (1, 2, 5),
                    (0, 3, 6),
                    (1, 3, 7),
                ];
                let bits = dots.iter().fold(0u32, |acc, &(dx, dy, bit)| {
                    acc | (u32::from(self.get(x + dx, y + dy) != 0) << bit)
                });
                out.push(char::from_u32(0x2800 + bits).unwrap_or(' '));
                x += 2;
            }
            if y != self.height - 1 {
                out.push('\n');
            }
            y += 4;
        }
        out
    }
}

/// A uniform float in 0..=1, as `rand() / RAND_MAX`.
fn unit(e: &mut Engine) -> f32 {
    (e.rng.next_u64() >> 40) as f32 / ((1u64 << 24) - 1) as f32
}

/// LOLWUT VERSION 5 [columns [squares-per-row [squares-per-column]]].
fn schotter(e: &mut Engine, rest: &[bytes::Bytes], own: &str) -> Result<String, Reply> {
    let [cols, per_row, per_col] = numbers(rest, [66, 8, 12], 1, 1000)?;
    let (per_row, per_col) = (per_row.min(200), per_col.min(200));
    let width = cols * 2;
    let padding = if width > 4 { 2 } else { 0 };
    let side = (width - padding * 2) as f32 / per_row as f32;
    let height = (side * per_col as f32) as i64 + padding * 2;
    let mut canvas = Canvas::new(width, height, 0);
    for y in 0..per_col {
        for x in 0..per_row {
            let mut sx = (x as f32 * side + side / 2.0 + padding as f32) as i64;
            let mut sy = (y as f32 * side + side / 2.0 + padding as f32) as i64;
            let mut angle = 0.0;
            if y > 1 {
                let scale = y as f32 / per_col as f32;
                let mut r = [unit(e) * scale, unit(e) * scale, unit(e) * scale];
                for v in &mut r {
                    if e.rng.below(2) == 1 {
                        *v = -*v;
                    }
                }
                angle = r[0];
                sx = (sx as f32 + r[1] * side / 3.0) as i64;
                sy = (sy as f32 + r[2] * side / 3.0) as i64;
            }
            canvas.square(sx, sy, side, angle);
        }
    }
    Ok(format!(
        "{}\nGeorg Nees - schotter, plotter on paper, 1968. Redis ver. {own}\n",
        canvas.braille()
    ))
}

/// LOLWUT VERSION 6 [columns [rows]]: a night skyline, one space per pixel in four colours.
fn skyline(e: &mut Engine, rest: &[bytes::Bytes], own: &str) -> Result<String, Reply> {
    let [cols, rows] = numbers(rest, [80, 20], 1, 1000)?;
    let mut canvas = Canvas::new(cols, rows, 3);
    // Three layers of buildings, farther ones lighter and taller, windows lit at random.
    for (layer, color) in [(0i64, 2u8), (1, 1), (2, 0)] {
        let mut x = e.rng.below(4) as i64 - 2;
        while x < cols {
            let w = 3 + e.rng.below(6) as i64;
            // Never up to the top row: the sky always shows (a one-row canvas is all sky).
            let h = (rows / 4 + e.rng.below((rows / 2).max(1) as usize) as i64 - layer * 2)
                .clamp(0, rows - 1);
            for bx in x..x + w {
                for by in rows - h..rows {
                    let window = color != 2
                        && (bx - x) % 2 == 1
                        && (rows - by) % 2 == 0
                        && e.rng.below(3) == 0;
                    canvas.set(bx, by, if window { 3 } else { color });
                }
            }
            x += w + 1 + e.rng.below(3) as i64;
        }
    }
    let mut out = String::new();
    for y in 0..rows {
        for x in 0..cols {
            let (fg, bg) = match canvas.get(x, y) {
                0 => (30, 40),
                1 => (90, 100),
                2 => (37, 47),
                _ => (97, 107),
            };
            out.push_str(&format!("\x1b[0;{fg};{bg}m \x1b[0m"));
        }
        out.push('\n');
    }
    Ok(format!(
        "{out}Dedicated to the 8 bit game developers of past and present.\nOriginal 8 bit image from Plaguemon by hikikomori. Redis ver. {own}\n"
    ))
}
