//! `SetValue`: a set, packed while small (Redis's intset, and from 7.2 its listpack), a hash
//! table once it outgrows the limits, and never packed again.
//!
//! Why packed: ten short members as separate heap strings in an index set cost about 1.5
//! times Redis's RSS per key (issue 17); one exact-size buffer costs less than Redis's.
//! Why "never again": Redis converts an intset or a listpack set once and keeps the
//! hashtable after deletions, and OBJECT ENCODING, DUMP's payload type and SSCAN's paging all
//! show which one a set is. Loading a payload (RESTORE, DEBUG RELOAD, a full sync) picks the
//! form from the contents, as Redis's loader does (`fit`).
//!
//! The buffer starts with a tag byte: `INTSET` while every member is an integer and there
//! are at most set-max-intset-entries of them, `LISTPACK` once a non-integer joined while
//! the set stayed within set-max-listpack-entries/-value. Redis 7.0 has no listpack sets: it
//! holds those as hashtables and OBJECT ENCODING says so (`encoding`), but redlab still packs
//! them, within the 7.2 limits' defaults, because memory is what a user cannot see.
//!
//! Order: both forms keep the order an `IndexSet` keeps, insertion order with swap-remove,
//! and a conversion keeps it, so SPOP's and SRANDMEMBER's seeded picks (by index) and every
//! reply are what they were before sets were packed (tests/determinism.rs, explorer replays).
//! Intsets reply sorted, as Redis's do; cmd/set sorts them at reply time.

use foldhash::fast::FixedState;
use indexmap::IndexSet;

use super::encoding::{Encoding, Limits};
use super::packed::{self, Items};
use crate::numfmt;

type Table = IndexSet<Vec<u8>, FixedState>;

/// Tag byte: only integers, within set-max-intset-entries (Redis's intset).
const INTSET: u8 = 0;
/// Tag byte: a non-integer member, within set-max-listpack-entries/-value (Redis 7.2's
/// listpack; a hashtable in Redis 7.0).
const LISTPACK: u8 = 1;

#[derive(Clone, Debug)]
enum Repr {
    /// The tag byte, then the members as `packed` items.
    Packed(Box<[u8]>),
    Table(Box<Table>),
}

/// A set value; 16 bytes, so `Value` stays 24.
#[derive(Clone, Debug)]
pub struct SetValue(Repr);

impl Default for SetValue {
    /// An empty intset, as Redis's `createIntsetObject` (the STORE commands start from one).
    fn default() -> Self {
        SetValue(Repr::Packed(Box::new([INTSET])))
    }
}

/// Whether Redis would hold `m` in an intset (`string2ll`).
fn is_int(m: &[u8]) -> bool {
    numfmt::parse_i64(m).is_some()
}

impl SetValue {
    /// The empty set a command creates for `first`, about to add `hint` members (SADD's
    /// argument count), as Redis's `setTypeCreate`: an intset for an integer (in Redis 7.2+
    /// only if `hint` fits set-max-intset-entries), else a listpack if `hint` fits
    /// set-max-listpack-entries, else a hash table at once.
    pub fn create(first: &[u8], hint: usize, l: &Limits) -> SetValue {
        if is_int(first) && (!l.set_listpack || hint <= l.set_max_intset_entries) {
            SetValue::default()
        } else if hint <= l.set_max_listpack_entries {
            SetValue(Repr::Packed(Box::new([LISTPACK])))
        } else {
            SetValue::new_table()
        }
    }

    /// An empty set in the hash-table form, for a loader that does not know the limits yet
    /// (it calls `fit` once they are known).
    pub fn new_table() -> SetValue {
        SetValue(Repr::Table(Box::default()))
    }

    /// The encoding OBJECT ENCODING reports.
    pub fn encoding(&self, l: &Limits) -> Encoding {
        match &self.0 {
            Repr::Packed(b) if b[0] == INTSET => Encoding::Intset,
            Repr::Packed(_) if l.set_listpack => Encoding::Listpack,
            _ => Encoding::Hashtable,
        }
    }

    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Packed(b) => Items::new(&b[1..]).count(),
            Repr::Table(t) => t.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        match &self.0 {
            Repr::Packed(b) => b.len() == 1,
            Repr::Table(t) => t.is_empty(),
        }
    }

    /// The members in the set's order.
    pub fn iter(&self) -> Iter<'_> {
        match &self.0 {
            Repr::Packed(b) => Iter::Packed(Items::new(&b[1..])),
            Repr::Table(t) => Iter::Table(t.iter()),
        }
    }

    pub fn contains(&self, m: &[u8]) -> bool {
        match &self.0 {
            Repr::Packed(b) => find(b, |x| x == m).is_some(),
            Repr::Table(t) => t.contains(m),
        }
    }

    /// The member at index `i` of the set's order.
    pub fn get_index(&self, i: usize) -> Option<&[u8]> {
        match &self.0 {
            Repr::Packed(b) => Items::new(&b[1..]).nth(i),
            Repr::Table(t) => t.get_index(i).map(|m| &m[..]),
        }
    }

    /// Adds `m`; returns whether it is new. Converts as Redis's `setTypeAdd`: an intset
    /// becomes a hash table past set-max-intset-entries; a non-integer turns it into a
    /// listpack if the set, its longest member and `m` stay within set-max-listpack-entries
    /// and -value, else into a hash table; a listpack becomes a hash table past those limits.
    pub fn insert(&mut self, m: &[u8], l: &Limits) -> bool {
        if let Repr::Packed(b) = &mut self.0 {
            if find(b, |x| x == m).is_some() {
                return false;
            }
            if let Some(tag) = tag_after_adding(b, m, l) {
                if b[0] == INTSET && tag == LISTPACK && l.set_listpack {
                    // Redis 7.2 copies an intset into the listpack in the intset's
                    // (ascending) order, which SMEMBERS then shows.
                    sort_numerically(b);
                }
                b[0] = tag;
                let mut item = Vec::with_capacity(packed::item_size(m.len()));
                packed::push_item(&mut item, m);
                packed::append(b, &item);
                return true;
            }
        }
        self.table().insert(m.to_vec())
    }

    /// Removes `m`. The last member takes its place (`IndexSet::swap_remove`), except in a
    /// listpack under a 7.2+ profile, where the members after it move up one place, as in
    /// Redis's listpack, so SMEMBERS keeps Redis's order there.
    pub fn remove(&mut self, m: &[u8], l: &Limits) -> bool {
        match &mut self.0 {
            Repr::Packed(b) => match find(b, |x| x == m) {
                Some(at) => {
                    remove_at(b, at, l);
                    true
                }
                None => false,
            },
            Repr::Table(t) => t.swap_remove(m),
        }
    }

    /// Removes the member at index `i`, as `remove` does.
    pub fn remove_index(&mut self, i: usize, l: &Limits) -> Option<Vec<u8>> {
        match &mut self.0 {
            Repr::Packed(b) => {
                let mut n = 0;
                let at = find(b, |_| {
                    n += 1;
                    n > i
                })?;
                Some(remove_at(b, at, l))
            }
            Repr::Table(t) => t.swap_remove_index(i),
        }
    }

    /// Rebuilds the set from what SPOP left when it took most of it, as Redis's
    /// `spopWithCountCommand` does then (its third case): a new set created for the first
    /// member left and filled one member at a time, so a hash table can become an intset or
    /// a listpack again. A 7.2+ listpack is kept as it is, as Redis 7.2 keeps it.
    pub fn rebuild(&mut self, l: &Limits) {
        if l.set_listpack && matches!(&self.0, Repr::Packed(b) if b[0] == LISTPACK) {
            return;
        }
        let Some(first) = self.iter().next() else {
            return;
        };
        let mut fresh = SetValue::create(first, 1, l);
        for m in self.iter() {
            fresh.insert(m, l);
        }
        *self = fresh;
    }

    /// Removes every member, keeping the form.
    pub fn clear(&mut self) {
        match &mut self.0 {
            Repr::Packed(b) => {
                let tag = b[0];
                *b = vec![tag].into_boxed_slice();
            }
            Repr::Table(t) => t.clear(),
        }
    }

    /// Chooses the form Redis's loader would for these contents: an intset when every
    /// member is an integer and they fit set-max-intset-entries; else a listpack when they
    /// fit both that and set-max-listpack-entries/-value (Redis 7.2's `rdbLoadObject` makes
    /// a hash table of anything longer than set-max-intset-entries); else a hash table.
    ///
    /// A set read as a listpack (RDB_TYPE_SET_LISTPACK, `from_listpack`) stays one while it
    /// fits set-max-listpack-entries, integers or not, as Redis 7.2's loader keeps it.
    pub fn fit(&mut self, l: &Limits) {
        let n = self.len();
        if l.set_listpack
            && matches!(&self.0, Repr::Packed(b) if b[0] == LISTPACK)
            && n <= l.set_max_listpack_entries
        {
            return;
        }
        let tag = if n <= l.set_max_intset_entries && self.iter().all(is_int) {
            Some(INTSET)
        } else if n <= l.set_max_intset_entries
            && n <= l.set_max_listpack_entries
            && self.iter().all(|m| m.len() <= l.set_max_listpack_value)
        {
            Some(LISTPACK)
        } else {
            None
        };
        match tag {
            Some(tag) => {
                let mut out = vec![tag];
                for m in self.iter() {
                    packed::push_item(&mut out, m);
                }
                self.0 = Repr::Packed(out.into_boxed_slice());
            }
            None => {
                self.table();
            }
        }
    }

    /// A set read from a listpack payload (Redis 7.2's RDB_TYPE_SET_LISTPACK), in the
    /// payload's order; None when a member repeats. `fit` then decides its form.
    pub fn from_listpack(members: Vec<Vec<u8>>) -> Option<SetValue> {
        let mut out = vec![LISTPACK];
        for (i, m) in members.iter().enumerate() {
            if members[..i].contains(m) {
                return None;
            }
            packed::push_item(&mut out, m);
        }
        Some(SetValue(Repr::Packed(out.into_boxed_slice())))
    }

    /// The hash table, converting to it (in the same order) if the set is packed.
    fn table(&mut self) -> &mut Table {
        if let Repr::Packed(b) = &self.0 {
            let mut t = Table::with_capacity_and_hasher(self.len(), FixedState::default());
            t.extend(Items::new(&b[1..]).map(<[u8]>::to_vec));
            self.0 = Repr::Table(Box::new(t));
        }
        match &mut self.0 {
            Repr::Table(t) => t,
            Repr::Packed(_) => unreachable!("converted just above"),
        }
    }

    /// The bytes this set holds, for used_memory: the packed buffer, or per member its heap
    /// string and the table's slot.
    pub fn approx_size(&self) -> usize {
        match &self.0 {
            Repr::Packed(b) => packed::heap_size(b.len()),
            Repr::Table(t) => t.iter().map(|m| m.len() + 16).sum::<usize>() + 64,
        }
    }
}

/// The tag the packed set `b` has after adding the new member `m`, or None when it must
/// become a hash table.
fn tag_after_adding(b: &[u8], m: &[u8], l: &Limits) -> Option<u8> {
    let n = Items::new(&b[1..]).count();
    let listpack_fits =
        |longest: usize| n < l.set_max_listpack_entries && longest <= l.set_max_listpack_value;
    match b[0] {
        INTSET if is_int(m) => (n < l.set_max_intset_entries).then_some(INTSET),
        INTSET => {
            let longest = Items::new(&b[1..]).map(<[u8]>::len).max().unwrap_or(0);
            listpack_fits(longest.max(m.len())).then_some(LISTPACK)
        }
        _ => listpack_fits(m.len()).then_some(LISTPACK),
    }
}

/// Puts the members of a packed intset in ascending order.
fn sort_numerically(b: &mut Box<[u8]>) {
    let mut ints: Vec<(i64, &[u8])> = Items::new(&b[1..])
        .map(|m| (numfmt::parse_i64(m).unwrap_or(0), m))
        .collect();
    ints.sort_unstable_by_key(|(n, _)| *n);
    let mut out = Vec::with_capacity(b.len());
    out.push(b[0]);
    for (_, m) in ints {
        packed::push_item(&mut out, m);
    }
    *b = out.into_boxed_slice();
}

/// The position in `b` of the first member `hit` accepts.
fn find(b: &[u8], mut hit: impl FnMut(&[u8]) -> bool) -> Option<usize> {
    // Items are read after the tag byte, so a position in `b` is one more than in `items`.
    let mut items = Items::new(&b[1..]);
    loop {
        let pos = items.pos();
        if hit(items.next()?) {
            return Some(pos + 1);
        }
    }
}

/// Removes the item at `at` from `b` and returns it: a listpack under a 7.2+ profile closes
/// the gap, anything else moves its last item into the hole.
fn remove_at(b: &mut Box<[u8]>, at: usize, l: &Limits) -> Vec<u8> {
    let (item, end) = packed::read_item(b, at);
    let removed = item.to_vec();
    let mut items = Items::new(&b[1..]);
    let mut last = at;
    loop {
        let pos = items.pos();
        if items.next().is_none() {
            break;
        }
        last = pos + 1;
    }
    if last == at || (l.set_listpack && b[0] == LISTPACK) {
        packed::splice(b, at..end, &[]);
    } else {
        let mut with = b[last..].to_vec();
        with.extend_from_slice(&b[end..last]);
        let len = b.len();
        packed::splice(b, at..len, &with);
    }
    removed
}

/// A set's members in order.
pub enum Iter<'a> {
    Packed(Items<'a>),
    Table(indexmap::set::Iter<'a, Vec<u8>>),
}

impl<'a> Iterator for Iter<'a> {
    type Item = &'a [u8];
    fn next(&mut self) -> Option<&'a [u8]> {
        match self {
            Iter::Packed(items) => items.next(),
            Iter::Table(t) => t.next().map(|m| &m[..]),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(intset: usize, entries: usize, value: usize, listpack: bool) -> Limits {
        Limits {
            set_max_intset_entries: intset,
            set_max_listpack_entries: entries,
            set_max_listpack_value: value,
            set_listpack: listpack,
            ..Limits::default()
        }
    }

    fn members(s: &SetValue) -> Vec<&[u8]> {
        s.iter().collect()
    }

    /// The packed form must keep exactly an IndexSet's order through inserts and
    /// swap-removes, so seeded SPOP/SRANDMEMBER picks do not change with the form.
    #[test]
    fn packed_order_is_index_set_order() {
        let l = Limits::default();
        let mut s = SetValue::default();
        let mut t = Table::default();
        let ops: [(&[u8], bool); 12] = [
            (b"5", true),
            (b"3", true),
            (b"x", true),
            (b"5", true),
            (b"yy", true),
            (b"3", false),
            (b"zzz", true),
            (b"zzz", false),
            (b"1", true),
            (b"x", false),
            (b"1", false),
            (b"q", true),
        ];
        for (m, add) in ops {
            if add {
                assert_eq!(s.insert(m, &l), t.insert(m.to_vec()));
            } else {
                assert_eq!(s.remove(m, &l), t.swap_remove(m));
            }
            assert!(matches!(s.0, Repr::Packed(_)));
            assert_eq!(members(&s), t.iter().map(|m| &m[..]).collect::<Vec<_>>());
            assert_eq!(s.len(), t.len());
        }
        assert_eq!(s.get_index(1), t.get_index(1).map(|m| &m[..]));
        assert_eq!(s.remove_index(0, &l), t.swap_remove_index(0));
        assert_eq!(s.remove_index(9, &l), None);
        assert_eq!(members(&s), t.iter().map(|m| &m[..]).collect::<Vec<_>>());
        while let Some(m) = t.swap_remove_index(0) {
            assert_eq!(s.remove_index(0, &l), Some(m));
        }
        assert!(s.is_empty());
    }

    #[test]
    fn a_7_2_listpack_closes_the_gap() {
        let l = limits(512, 128, 64, true);
        let mut s = SetValue::create(b"a", 4, &l);
        for m in [b"a", b"b", b"c", b"d"] {
            s.insert(m, &l);
        }
        assert!(s.remove(b"b", &l));
        assert_eq!(members(&s), vec![&b"a"[..], b"c", b"d"]);
        assert_eq!(s.remove_index(0, &l), Some(b"a".to_vec()));
        assert_eq!(members(&s), vec![&b"c"[..], b"d"]);
    }

    #[test]
    fn intset_converts_past_its_limit_for_good() {
        let l = limits(3, 128, 64, true);
        let mut s = SetValue::default();
        for m in [b"1", b"2", b"3"] {
            s.insert(m, &l);
        }
        assert_eq!(s.encoding(&l), Encoding::Intset);
        s.insert(b"4", &l);
        assert_eq!(s.encoding(&l), Encoding::Hashtable, "a fourth integer");
        s.remove(b"4", &l);
        assert_eq!(s.encoding(&l), Encoding::Hashtable, "a hashtable stays one");
        assert_eq!(members(&s), vec![&b"1"[..], b"2", b"3"]);
        s.fit(&l);
        assert_eq!(s.encoding(&l), Encoding::Intset, "a loader packs what fits");
    }

    #[test]
    fn a_string_makes_a_listpack_under_7_2_and_a_hashtable_under_7_0() {
        let l72 = limits(512, 3, 4, true);
        let l70 = Limits {
            set_listpack: false,
            ..l72
        };
        let mut s = SetValue::default();
        s.insert(b"12", &l72);
        s.insert(b"-3", &l72);
        s.insert(b"ab", &l72);
        assert_eq!(s.encoding(&l72), Encoding::Listpack);
        assert_eq!(
            members(&s),
            vec![&b"-3"[..], b"12", b"ab"],
            "the intset's order"
        );
        s.remove(b"-3", &l72);
        assert_eq!(s.encoding(&l70), Encoding::Hashtable);
        s.remove(b"ab", &l72);
        assert_eq!(
            s.encoding(&l72),
            Encoding::Listpack,
            "no way back to an intset"
        );
        s.insert(b"abcde", &l72);
        assert_eq!(
            s.encoding(&l72),
            Encoding::Hashtable,
            "a member over the value limit"
        );

        let mut s = SetValue::default();
        s.insert(b"123456", &l72);
        s.insert(b"a", &l72);
        assert_eq!(
            s.encoding(&l72),
            Encoding::Hashtable,
            "an integer over the value limit"
        );

        let mut s = SetValue::create(b"a", 1, &l72);
        for m in [b"a", b"b", b"c"] {
            s.insert(m, &l72);
        }
        assert_eq!(s.encoding(&l72), Encoding::Listpack);
        s.insert(b"d", &l72);
        assert_eq!(
            s.encoding(&l72),
            Encoding::Hashtable,
            "past the entry limit"
        );
    }

    #[test]
    fn create_follows_the_hint() {
        let l = limits(4, 6, 64, true);
        assert_eq!(SetValue::create(b"1", 4, &l).encoding(&l), Encoding::Intset);
        assert_eq!(
            SetValue::create(b"1", 5, &l).encoding(&l),
            Encoding::Listpack
        );
        assert_eq!(
            SetValue::create(b"a", 7, &l).encoding(&l),
            Encoding::Hashtable
        );
        let l70 = Limits {
            set_listpack: false,
            ..l
        };
        assert_eq!(
            SetValue::create(b"1", 500, &l70).encoding(&l70),
            Encoding::Intset
        );
    }
}
