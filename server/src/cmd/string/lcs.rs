//! LCS: the longest common subsequence of two strings, its length, or its matching ranges.
//!
//! Redis fills the whole (|a|+1) x (|b|+1) table of u32 and walks it back from the end; the
//! ranges come out last-first, and which of equally long subsequences is reported depends on
//! that walk, so it is reproduced step by step. The table size is capped the way Redis 7.0.15
//! caps it: by proto-max-bulk-len.

use crate::cmd::args;
use crate::cmd::table::CmdResult;
use crate::db::Value;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::reply::Reply;

fn string_or_empty(e: &mut Engine, db: usize, key: &[u8]) -> Result<Vec<u8>, ()> {
    match e.db(db).get(key).map(|en| &en.value) {
        None => Ok(Vec::new()),
        Some(Value::Str(s)) => Ok(s.to_vec()),
        Some(_) => Err(()),
    }
}

pub(super) fn lcs(e: &mut Engine, call: &mut Call) -> CmdResult {
    let a = string_or_empty(e, call.db, call.arg(1));
    let b = string_or_empty(e, call.db, call.arg(2));
    let (Ok(a), Ok(b)) = (a, b) else {
        return Err(Reply::err(errors::LCS_NOT_STRINGS));
    };
    let (mut get_len, mut get_idx, mut with_match_len) = (false, false, false);
    let mut min_match_len: i64 = 0;
    let mut j = 3;
    while j < call.argc() {
        let opt = call.arg(j);
        let more = call.argc() - 1 - j;
        if args::is(opt, "idx") {
            get_idx = true;
        } else if args::is(opt, "len") {
            get_len = true;
        } else if args::is(opt, "withmatchlen") {
            with_match_len = true;
        } else if args::is(opt, "minmatchlen") && more > 0 {
            let n = args::int(call.arg(j + 1))?;
            min_match_len = n.max(0);
            j += 1;
        } else {
            return Err(Reply::err(errors::SYNTAX));
        }
        j += 1;
    }
    if get_idx && get_len {
        return Err(Reply::err(errors::LCS_IDX_AND_LEN));
    }
    if a.len() as u64 >= u32::MAX as u64 - 1 || b.len() as u64 >= u32::MAX as u64 - 1 {
        return Err(Reply::err(errors::LCS_TOO_LONG));
    }
    let cells = (a.len() as u64 + 1) * (b.len() as u64 + 1);
    if cells.saturating_mul(4) > e.config.proto_max_bulk_len {
        return Err(Reply::err(errors::LCS_TOO_MUCH_MEMORY));
    }
    let table = Table::fill(&a, &b);
    let total = table.at(a.len(), b.len());
    if get_len {
        return Ok(Reply::Int(total as i64));
    }
    let (text, ranges) = table.walk(&a, &b, min_match_len as u64, get_idx);
    if !get_idx {
        return Ok(Reply::bulk(text));
    }
    let matches = ranges
        .into_iter()
        .map(|r| {
            let mut item = vec![
                Reply::Array(vec![Reply::Int(r.a.0 as i64), Reply::Int(r.a.1 as i64)]),
                Reply::Array(vec![Reply::Int(r.b.0 as i64), Reply::Int(r.b.1 as i64)]),
            ];
            if with_match_len {
                item.push(Reply::Int(r.len as i64));
            }
            Reply::Array(item)
        })
        .collect();
    Ok(Reply::Map(vec![
        (Reply::bulk("matches"), Reply::Array(matches)),
        (Reply::bulk("len"), Reply::Int(total as i64)),
    ]))
}

struct Range {
    a: (usize, usize),
    b: (usize, usize),
    len: usize,
}

/// The dynamic-programming table: cell (i, j) is the LCS length of a[..i] and b[..j].
struct Table {
    cols: usize,
    cells: Vec<u32>,
}

impl Table {
    fn fill(a: &[u8], b: &[u8]) -> Table {
        let cols = b.len() + 1;
        let mut cells = vec![0u32; (a.len() + 1) * cols];
        for i in 1..=a.len() {
            for j in 1..=b.len() {
                cells[i * cols + j] = if a[i - 1] == b[j - 1] {
                    cells[(i - 1) * cols + j - 1] + 1
                } else {
                    cells[(i - 1) * cols + j].max(cells[i * cols + j - 1])
                };
            }
        }
        Table { cols, cells }
    }

    fn at(&self, i: usize, j: usize) -> u32 {
        self.cells[i * self.cols + j]
    }

    /// Walks back from the end: the subsequence, and (when asked) the ranges of at least
    /// `min_len` bytes, last range first, as Redis emits them.
    fn walk(&self, a: &[u8], b: &[u8], min_len: u64, want_ranges: bool) -> (Vec<u8>, Vec<Range>) {
        let mut idx = self.at(a.len(), b.len()) as usize;
        let mut text = vec![0u8; idx];
        let mut ranges = Vec::new();
        let (mut i, mut j) = (a.len(), b.len());
        // `None` plays the role of Redis's "arange_start == alen" (no range open).
        let mut open: Option<(usize, usize, usize, usize)> = None;
        while i > 0 && j > 0 {
            let mut emit = false;
            if a[i - 1] == b[j - 1] {
                text[idx - 1] = a[i - 1];
                match open {
                    None => open = Some((i - 1, i - 1, j - 1, j - 1)),
                    Some((a_start, a_end, b_start, b_end)) => {
                        if a_start == i && b_start == j {
                            open = Some((a_start - 1, a_end, b_start - 1, b_end));
                        } else {
                            emit = true;
                        }
                    }
                }
                if let Some((a_start, _, b_start, _)) = open {
                    if a_start == 0 || b_start == 0 {
                        emit = true;
                    }
                }
                idx -= 1;
                i -= 1;
                j -= 1;
            } else {
                if self.at(i - 1, j) > self.at(i, j - 1) {
                    i -= 1;
                } else {
                    j -= 1;
                }
                if open.is_some() {
                    emit = true;
                }
            }
            if emit {
                if let Some((a_start, a_end, b_start, b_end)) = open.take() {
                    let len = a_end - a_start + 1;
                    if want_ranges && (min_len == 0 || len as u64 >= min_len) {
                        ranges.push(Range {
                            a: (a_start, a_end),
                            b: (b_start, b_end),
                            len,
                        });
                    }
                }
            }
        }
        (text, ranges)
    }
}
