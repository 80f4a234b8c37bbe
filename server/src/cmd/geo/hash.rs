//! Redis's geohash: 26 steps of longitude and latitude interleaved into a 52-bit integer,
//! stored as the member's sorted-set score; the box and neighbour arithmetic that radius and
//! box searches walk; the haversine distance with Redis's Earth radius.
//!
//! Every step is done in the same floating-point order as Redis, so the scores, the decoded
//! coordinates and the distances are the same doubles, not merely close ones.

pub const STEP_MAX: u8 = 26;
pub const LAT_MIN: f64 = -85.051_128_78;
pub const LAT_MAX: f64 = 85.051_128_78;
pub const LONG_MIN: f64 = -180.0;
pub const LONG_MAX: f64 = 180.0;
const EARTH_RADIUS_M: f64 = 6_372_797.560_856;
const MERCATOR_MAX: f64 = 20_037_726.37;
const D_R: f64 = std::f64::consts::PI / 180.0;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Range {
    pub min: f64,
    pub max: f64,
}

pub const WGS84_LONG: Range = Range {
    min: LONG_MIN,
    max: LONG_MAX,
};
pub const WGS84_LAT: Range = Range {
    min: LAT_MIN,
    max: LAT_MAX,
};

/// A geohash of `step` bits per coordinate; `bits == 0 && step == 0` means "no box".
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub struct Bits {
    pub bits: u64,
    pub step: u8,
}

impl Bits {
    pub fn is_zero(self) -> bool {
        self.bits == 0 && self.step == 0
    }
}

#[derive(Clone, Copy, Debug)]
pub struct Area {
    pub long: Range,
    pub lat: Range,
}

/// Spreads the low 32 bits of `v` to the even bit positions.
fn spread(v: u32) -> u64 {
    let mut x = v as u64;
    x = (x | (x << 16)) & 0x0000_ffff_0000_ffff;
    x = (x | (x << 8)) & 0x00ff_00ff_00ff_00ff;
    x = (x | (x << 4)) & 0x0f0f_0f0f_0f0f_0f0f;
    x = (x | (x << 2)) & 0x3333_3333_3333_3333;
    (x | (x << 1)) & 0x5555_5555_5555_5555
}

/// Gathers the even bit positions of `v` into the low 32 bits.
fn gather(v: u64) -> u32 {
    let mut x = v & 0x5555_5555_5555_5555;
    x = (x | (x >> 1)) & 0x3333_3333_3333_3333;
    x = (x | (x >> 2)) & 0x0f0f_0f0f_0f0f_0f0f;
    x = (x | (x >> 4)) & 0x00ff_00ff_00ff_00ff;
    x = (x | (x >> 8)) & 0x0000_ffff_0000_ffff;
    x = (x | (x >> 16)) & 0x0000_0000_ffff_ffff;
    x as u32
}

/// Latitude in the even bits, longitude in the odd ones.
fn interleave(lat: u32, long: u32) -> u64 {
    spread(lat) | (spread(long) << 1)
}

/// C's conversion of a non-negative double to uint32_t (truncation); what Redis relies on.
fn to_u32(d: f64) -> u32 {
    d as u32
}

/// Redis's `geohashEncode`; None outside the WGS84 limits or the given ranges.
pub fn encode(long_r: Range, lat_r: Range, long: f64, lat: f64, step: u8) -> Option<Bits> {
    if step == 0 || step > 32 {
        return None;
    }
    if !(LONG_MIN..=LONG_MAX).contains(&long) || !(LAT_MIN..=LAT_MAX).contains(&lat) {
        return None;
    }
    if lat < lat_r.min || lat > lat_r.max || long < long_r.min || long > long_r.max {
        return None;
    }
    let mut lat_off = (lat - lat_r.min) / (lat_r.max - lat_r.min);
    let mut long_off = (long - long_r.min) / (long_r.max - long_r.min);
    lat_off *= (1u64 << step) as f64;
    long_off *= (1u64 << step) as f64;
    Some(Bits {
        bits: interleave(to_u32(lat_off), to_u32(long_off)),
        step,
    })
}

/// The 52-bit score of a WGS84 position (the caller has checked the limits).
pub fn score_of(long: f64, lat: f64) -> Option<u64> {
    encode(WGS84_LONG, WGS84_LAT, long, lat, STEP_MAX).map(align52)
}

pub fn align52(h: Bits) -> u64 {
    h.bits << (52 - h.step as u32 * 2)
}

/// Redis's `geohashDecode`: the box a hash stands for.
pub fn decode(long_r: Range, lat_r: Range, h: Bits) -> Option<Area> {
    if h.is_zero() {
        return None;
    }
    let lat_i = gather(h.bits);
    let long_i = gather(h.bits >> 1);
    let div = (1u64 << h.step) as f64;
    let lat_scale = lat_r.max - lat_r.min;
    let long_scale = long_r.max - long_r.min;
    Some(Area {
        lat: Range {
            min: lat_r.min + (lat_i as f64 * 1.0 / div) * lat_scale,
            max: lat_r.min + (lat_i.wrapping_add(1) as f64 * 1.0 / div) * lat_scale,
        },
        long: Range {
            min: long_r.min + (long_i as f64 * 1.0 / div) * long_scale,
            max: long_r.min + (long_i.wrapping_add(1) as f64 * 1.0 / div) * long_scale,
        },
    })
}

/// The position a score stands for: the centre of its box, as GEOPOS prints it.
pub fn decode_score(score: f64) -> Option<(f64, f64)> {
    // C's double to uint64_t conversion: a score ZADD put there need not be a geohash.
    let bits = score_bits_x86(score);
    let area = decode(
        WGS84_LONG,
        WGS84_LAT,
        Bits {
            bits,
            step: STEP_MAX,
        },
    )?;
    let long = ((area.long.min + area.long.max) / 2.0).clamp(LONG_MIN, LONG_MAX);
    let lat = ((area.lat.min + area.lat.max) / 2.0).clamp(LAT_MIN, LAT_MAX);
    Some((long, lat))
}

/// What gcc's double to uint64_t conversion gives on x86-64 outside the uint64 range:
/// cvttsd2si of the value (or of the value minus 2^63, with the top bit set back).
fn score_bits_x86(d: f64) -> u64 {
    const TWO63: f64 = 9_223_372_036_854_775_808.0;
    let as_i64 = |v: f64| -> i64 {
        if v.is_nan() || !(-TWO63..TWO63).contains(&v) {
            i64::MIN
        } else {
            v as i64
        }
    };
    if d < TWO63 {
        as_i64(d) as u64
    } else {
        (as_i64(d - TWO63) as u64) ^ (1u64 << 63)
    }
}

fn move_x(h: &mut Bits, d: i8) {
    if d == 0 {
        return;
    }
    let mut x = h.bits & 0xaaaa_aaaa_aaaa_aaaa;
    let y = h.bits & 0x5555_5555_5555_5555;
    let zz = 0x5555_5555_5555_5555u64 >> (64 - h.step as u32 * 2);
    if d > 0 {
        x = x.wrapping_add(zz + 1);
    } else {
        x |= zz;
        x = x.wrapping_sub(zz + 1);
    }
    x &= 0xaaaa_aaaa_aaaa_aaaau64 >> (64 - h.step as u32 * 2);
    h.bits = x | y;
}

fn move_y(h: &mut Bits, d: i8) {
    if d == 0 {
        return;
    }
    let x = h.bits & 0xaaaa_aaaa_aaaa_aaaa;
    let mut y = h.bits & 0x5555_5555_5555_5555;
    let zz = 0xaaaa_aaaa_aaaa_aaaau64 >> (64 - h.step as u32 * 2);
    if d > 0 {
        y = y.wrapping_add(zz + 1);
    } else {
        y |= zz;
        y = y.wrapping_sub(zz + 1);
    }
    y &= 0x5555_5555_5555_5555u64 >> (64 - h.step as u32 * 2);
    h.bits = x | y;
}

fn moved(h: Bits, dx: i8, dy: i8) -> Bits {
    let mut n = h;
    move_x(&mut n, dx);
    move_y(&mut n, dy);
    n
}

/// The area to search: the centre box and its eight neighbours in the order Redis visits
/// them (self, N, S, E, W, NE, NW, SE, SW), the useless ones zeroed.
pub struct Areas {
    pub boxes: [Bits; 9],
}

/// The shape of a search, in metres.
#[derive(Clone, Copy, Debug)]
pub enum Shape {
    Radius(f64),
    /// Width and height.
    Box(f64, f64),
}

/// Redis's `geohashEstimateStepsByRadius`.
fn steps_for_radius(mut range_m: f64, lat: f64) -> u8 {
    if range_m == 0.0 {
        return 26;
    }
    let mut step: i32 = 1;
    while range_m < MERCATOR_MAX {
        range_m *= 2.0;
        step += 1;
    }
    step -= 2;
    if !(-66.0..=66.0).contains(&lat) {
        step -= 1;
        if !(-80.0..=80.0).contains(&lat) {
            step -= 1;
        }
    }
    step.clamp(1, 26) as u8
}

fn rad_deg(a: f64) -> f64 {
    a / D_R
}

fn deg_rad(a: f64) -> f64 {
    a * D_R
}

/// Redis's `geohashBoundingBox`: [min long, min lat, max long, max lat]. `conv` is the unit's
/// size in metres and the shape is in that unit, as Redis keeps them.
fn bounding_box(long: f64, lat: f64, shape: Shape, conv: f64) -> [f64; 4] {
    let (height, width) = match shape {
        Shape::Radius(r) => (conv * r, conv * r),
        Shape::Box(w, h) => (conv * (h / 2.0), conv * (w / 2.0)),
    };
    let lat_delta = rad_deg(height / EARTH_RADIUS_M);
    let long_delta_top = rad_deg(width / EARTH_RADIUS_M / deg_rad(lat + lat_delta).cos());
    let long_delta_bottom = rad_deg(width / EARTH_RADIUS_M / deg_rad(lat - lat_delta).cos());
    let delta = if lat < 0.0 {
        long_delta_bottom
    } else {
        long_delta_top
    };
    [long - delta, lat - lat_delta, long + delta, lat + lat_delta]
}

/// Redis's `geohashCalculateAreasByShapeWGS84`.
pub fn areas(long: f64, lat: f64, shape: Shape, conv: f64) -> Areas {
    let [min_lon, min_lat, max_lon, max_lat] = bounding_box(long, lat, shape, conv);
    let radius_m = match shape {
        Shape::Radius(r) => r,
        Shape::Box(w, h) => ((w / 2.0) * (w / 2.0) + (h / 2.0) * (h / 2.0)).sqrt(),
    } * conv;
    let mut steps = steps_for_radius(radius_m, lat);
    let cover = |steps: u8| {
        let hash = encode(WGS84_LONG, WGS84_LAT, long, lat, steps).unwrap_or_default();
        let n = [
            moved(hash, 0, 1),
            moved(hash, 0, -1),
            moved(hash, 1, 0),
            moved(hash, -1, 0),
            moved(hash, 1, 1),
            moved(hash, -1, 1),
            moved(hash, 1, -1),
            moved(hash, -1, -1),
        ];
        (hash, n)
    };
    let (mut hash, mut n) = cover(steps);
    let dec = |h: Bits| decode(WGS84_LONG, WGS84_LAT, h);
    let decrease = match (dec(n[0]), dec(n[1]), dec(n[2]), dec(n[3])) {
        (Some(north), Some(south), Some(east), Some(west)) => {
            north.lat.max < max_lat
                || south.lat.min > min_lat
                || east.long.max < max_lon
                || west.long.min > min_lon
        }
        _ => false,
    };
    if steps > 1 && decrease {
        steps -= 1;
        (hash, n) = cover(steps);
    }
    let [mut north, mut south, mut east, mut west, mut ne, mut nw, mut se, mut sw] = n;
    if steps >= 2 {
        if let Some(area) = dec(hash) {
            let zero = Bits::default();
            if area.lat.min < min_lat {
                (south, sw, se) = (zero, zero, zero);
            }
            if area.lat.max > max_lat {
                (north, ne, nw) = (zero, zero, zero);
            }
            if area.long.min < min_lon {
                (west, sw, nw) = (zero, zero, zero);
            }
            if area.long.max > max_lon {
                (east, se, ne) = (zero, zero, zero);
            }
        }
    }
    Areas {
        boxes: [hash, north, south, east, west, ne, nw, se, sw],
    }
}

/// Redis's `geohashGetLatDistance`.
pub fn lat_distance(lat1: f64, lat2: f64) -> f64 {
    EARTH_RADIUS_M * (deg_rad(lat2) - deg_rad(lat1)).abs()
}

/// Redis's haversine `geohashGetDistance`, in metres.
pub fn distance(lon1: f64, lat1: f64, lon2: f64, lat2: f64) -> f64 {
    let lon1r = deg_rad(lon1);
    let lon2r = deg_rad(lon2);
    let v = ((lon2r - lon1r) / 2.0).sin();
    if v == 0.0 {
        return lat_distance(lat1, lat2);
    }
    let lat1r = deg_rad(lat1);
    let lat2r = deg_rad(lat2);
    let u = ((lat2r - lat1r) / 2.0).sin();
    let a = u * u + lat1r.cos() * lat2r.cos() * v * v;
    2.0 * EARTH_RADIUS_M * a.sqrt().asin()
}

/// Whether the point (x2, y2) is inside the shape centred on (x1, y1), and its distance.
pub fn within(shape: Shape, conv: f64, x1: f64, y1: f64, x2: f64, y2: f64) -> Option<f64> {
    match shape {
        Shape::Radius(r) => {
            let d = distance(x1, y1, x2, y2);
            (d <= r * conv).then_some(d)
        }
        Shape::Box(w, h) => {
            let (width_m, height_m) = (w * conv, h * conv);
            if lat_distance(y2, y1) > height_m / 2.0 {
                return None;
            }
            if distance(x2, y2, x1, y2) > width_m / 2.0 {
                return None;
            }
            Some(distance(x1, y1, x2, y2))
        }
    }
}

/// GEOHASH's 11-character string: the position re-encoded over the standard latitude range
/// of -90..90, in the base-32 alphabet, the last character always '0'.
pub fn geohash_string(long: f64, lat: f64) -> String {
    const ALPHABET: &[u8; 32] = b"0123456789bcdefghjkmnpqrstuvwxyz";
    let std_lat = Range {
        min: -90.0,
        max: 90.0,
    };
    let bits = encode(WGS84_LONG, std_lat, long, lat, 26)
        .map(|h| h.bits)
        .unwrap_or(0);
    (0..11)
        .map(|i| {
            let idx = if i == 10 {
                0
            } else {
                (bits >> (52 - (i + 1) * 5)) & 0x1f
            };
            ALPHABET[idx as usize] as char
        })
        .collect()
}
