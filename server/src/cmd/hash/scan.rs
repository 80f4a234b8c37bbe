//! The cursor logic HSCAN and SSCAN share.
//!
//! Redis answers a small (listpack or intset) collection in one call with cursor 0, whatever
//! the cursor; the callers do that themselves. For big collections Redis walks its hash
//! table with a reverse-binary cursor, so every element present for the whole scan is
//! returned at least once even if the collection changes in between; `page` does the same
//! over a virtual table (see `db::scan`).

use std::hash::BuildHasher;

use foldhash::fast::FixedState;

use crate::reply::Reply;

/// HSCAN's and SSCAN's cursor: the one parser SCAN and its kin share.
pub(crate) use crate::db::scan::parse_cursor_in;

/// Which collection a scan walks (its options are parsed by `cmd::args::scan_options`).
pub(crate) use crate::db::scan::Scanned;

fn scan_hash(item: &[u8]) -> u64 {
    FixedState::with_seed(0x5ca7_5ca7).hash_one(item)
}

/// One page of a scan over a big collection, Redis's reverse-binary bucket cursor (see
/// `db::scan::step`): the items of the buckets visited from `cursor` and the next cursor (0
/// when done). `items` yields (element, payload) for the whole collection.
pub(crate) fn page<'a, T>(
    items: impl Iterator<Item = (&'a [u8], T)>,
    cursor: u64,
    count: usize,
) -> (u64, Vec<T>) {
    let (found, next) = crate::db::scan::step(items.map(|(k, t)| (scan_hash(k), t)), cursor, count);
    (next, found)
}

/// The `[cursor, [items...]]` reply.
pub(crate) fn reply(cursor: u64, items: Vec<Reply>) -> Reply {
    let mut buf = itoa::Buffer::new();
    Reply::Array(vec![Reply::bulk(buf.format(cursor)), Reply::Array(items)])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paging_visits_every_element_once() {
        let items: Vec<Vec<u8>> = (0..1000).map(|i| format!("m{i}").into_bytes()).collect();
        let mut seen = std::collections::HashSet::new();
        let mut cursor = 0;
        let mut calls = 0;
        loop {
            let (next, got) = page(items.iter().map(|m| (&m[..], m.clone())), cursor, 7);
            for g in got {
                assert!(seen.insert(g), "returned twice");
            }
            calls += 1;
            if next == 0 {
                break;
            }
            assert!(next < 1024, "a bucket index of a 1024-bucket table");
            cursor = next;
        }
        assert_eq!(seen.len(), 1000);
        assert!(calls >= 1000 / 14, "{calls}");
    }

    #[test]
    fn elements_present_throughout_survive_removals() {
        let mut items: Vec<Vec<u8>> = (0..200).map(|i| format!("{i}").into_bytes()).collect();
        let keep: Vec<Vec<u8>> = items.iter().step_by(2).cloned().collect();
        let mut seen = std::collections::HashSet::new();
        let mut cursor = 0;
        loop {
            let (next, got) = page(items.iter().map(|m| (&m[..], m.clone())), cursor, 10);
            seen.extend(got);
            // Remove a few odd elements between calls.
            let odd = items.iter().position(|m| !keep.contains(m));
            if let Some(i) = odd {
                items.remove(i);
            }
            if next == 0 {
                break;
            }
            cursor = next;
        }
        assert!(keep.iter().all(|k| seen.contains(k)));
    }
}
