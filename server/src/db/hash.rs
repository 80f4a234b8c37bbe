//! `HashValue`: a hash, packed while small (Redis's listpack), a hash table once it outgrows
//! hash-max-listpack-entries or -value (Redis's hashtable), and never packed again.
//!
//! Why two forms: ten short fields as separate heap strings in an index map cost about seven
//! times Redis's listpack (issue 17); packed they cost what Redis's do. Why "never again":
//! Redis 7.0 converts a listpack hash once and keeps the hashtable after deletions, and
//! OBJECT ENCODING, DUMP's payload type and HSCAN's paging all show which one a hash is
//! (issue 13.8). Loading a payload (RESTORE, DEBUG RELOAD, a full sync) picks the form from
//! the contents, as Redis's loader does (`fit`).
//!
//! Both forms keep insertion order and close the gap on a deletion, which is the order of
//! Redis's listpack; HGETALL, HRANDFIELD's picks and DUMP follow it. Bigger hashes are hash
//! tables in Redis, whose order no client relies on; the index map keeps the same order so a
//! conversion changes no reply.

use foldhash::fast::FixedState;
use indexmap::IndexMap;

use super::encoding::Limits;
use super::packed::{self, Items};

type Table = IndexMap<Vec<u8>, Vec<u8>, FixedState>;

#[derive(Clone, Debug)]
enum Repr {
    /// Field and value items alternating (`packed`).
    Packed(Box<[u8]>),
    Table(Box<Table>),
}

/// A hash value; 16 bytes, so `Value` stays 24.
#[derive(Clone, Debug)]
pub struct HashValue(Repr);

impl Default for HashValue {
    fn default() -> Self {
        HashValue(Repr::Packed(Box::default()))
    }
}

impl HashValue {
    /// Whether this hash is held as Redis's listpack (else as a hashtable).
    pub fn is_listpack(&self) -> bool {
        matches!(self.0, Repr::Packed(_))
    }

    pub fn len(&self) -> usize {
        match &self.0 {
            Repr::Packed(b) => Items::new(b).count() / 2,
            Repr::Table(t) => t.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        match &self.0 {
            Repr::Packed(b) => b.is_empty(),
            Repr::Table(t) => t.is_empty(),
        }
    }

    /// Field/value pairs in order.
    pub fn iter(&self) -> Iter<'_> {
        match &self.0 {
            Repr::Packed(b) => Iter::Packed(Items::new(b)),
            Repr::Table(t) => Iter::Table(t.iter()),
        }
    }

    pub fn keys(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.iter().map(|(k, _)| k)
    }

    pub fn values(&self) -> impl Iterator<Item = &[u8]> + '_ {
        self.iter().map(|(_, v)| v)
    }

    pub fn get(&self, field: &[u8]) -> Option<&[u8]> {
        match &self.0 {
            Repr::Packed(b) => find(b, field).map(|f| f.value(b)),
            Repr::Table(t) => t.get(field).map(|v| &v[..]),
        }
    }

    pub fn contains_key(&self, field: &[u8]) -> bool {
        self.get(field).is_some()
    }

    /// Sets `field` (a field that exists keeps its place); returns whether it is new. Converts
    /// to a hash table, for good, when the field or the value is longer than
    /// hash-max-listpack-value or the hash grows past hash-max-listpack-entries (Redis's
    /// `hashTypeSet`).
    pub fn set(&mut self, field: &[u8], value: &[u8], l: &Limits) -> bool {
        if field.len() > l.hash_max_listpack_value || value.len() > l.hash_max_listpack_value {
            self.convert();
        }
        let new = match &mut self.0 {
            Repr::Table(t) => match t.get_mut(field) {
                Some(v) => {
                    v.clear();
                    v.extend_from_slice(value);
                    false
                }
                None => {
                    t.insert(field.to_vec(), value.to_vec());
                    true
                }
            },
            Repr::Packed(b) => {
                let mut item = Vec::with_capacity(packed::item_size(value.len()));
                packed::push_item(&mut item, value);
                match find(b, field) {
                    Some(f) => {
                        packed::splice(b, f.value_at..f.end, &item);
                        false
                    }
                    None => {
                        let mut pair = Vec::with_capacity(packed::item_size(field.len()));
                        packed::push_item(&mut pair, field);
                        pair.extend_from_slice(&item);
                        packed::append(b, &pair);
                        true
                    }
                }
            }
        };
        if new && self.is_listpack() && self.len() > l.hash_max_listpack_entries {
            self.convert();
        }
        new
    }

    /// Deletes `field`; the fields after it move up one place. Returns its value.
    pub fn remove(&mut self, field: &[u8]) -> Option<Vec<u8>> {
        match &mut self.0 {
            Repr::Table(t) => t.shift_remove(field),
            Repr::Packed(b) => {
                let f = find(b, field)?;
                let value = f.value(b).to_vec();
                packed::splice(b, f.start..f.end, &[]);
                Some(value)
            }
        }
    }

    /// An empty hash in the hash-table form, for a loader that does not know the limits yet
    /// (it calls `fit` once they are known).
    pub fn new_table() -> HashValue {
        HashValue(Repr::Table(Box::default()))
    }

    /// Chooses the form Redis's loader would for these contents: packed when within both
    /// limits, else a hash table.
    pub fn fit(&mut self, l: &Limits) {
        let small = self.len() <= l.hash_max_listpack_entries
            && self.iter().all(|(k, v)| {
                k.len() <= l.hash_max_listpack_value && v.len() <= l.hash_max_listpack_value
            });
        match (small, self.is_listpack()) {
            (false, true) => self.convert(),
            (true, false) => {
                let mut out = Vec::new();
                for (k, v) in self.iter() {
                    packed::push_item(&mut out, k);
                    packed::push_item(&mut out, v);
                }
                self.0 = Repr::Packed(out.into_boxed_slice());
            }
            _ => {}
        }
    }

    /// Moves the contents to a hash table, in the same order.
    fn convert(&mut self) {
        if let Repr::Packed(b) = &self.0 {
            let mut t = Table::with_capacity_and_hasher(self.len(), FixedState::default());
            for (k, v) in pairs(b) {
                t.insert(k.to_vec(), v.to_vec());
            }
            self.0 = Repr::Table(Box::new(t));
        }
    }

    /// The bytes this hash holds, for used_memory: the packed buffer, or per field its two
    /// heap strings and the table's slot.
    pub fn approx_size(&self) -> usize {
        match &self.0 {
            Repr::Packed(b) => packed::heap_size(b.len()),
            Repr::Table(t) => t.iter().map(|(k, v)| k.len() + v.len() + 24).sum::<usize>() + 64,
        }
    }
}

#[cfg(test)]
impl<const N: usize> From<[(&[u8], &[u8]); N]> for HashValue {
    /// A packed hash of these pairs (tests).
    fn from(pairs: [(&[u8], &[u8]); N]) -> HashValue {
        let mut h = HashValue::default();
        let l = Limits::default();
        for (k, v) in pairs {
            h.set(k, v, &l);
        }
        h
    }
}

/// Where a field's pair sits in a packed buffer.
struct Found {
    start: usize,
    value_at: usize,
    end: usize,
}

impl Found {
    fn value<'a>(&self, b: &'a [u8]) -> &'a [u8] {
        packed::read_item(b, self.value_at).0
    }
}

fn find(b: &[u8], field: &[u8]) -> Option<Found> {
    let mut items = Items::new(b);
    loop {
        let start = items.pos();
        let k = items.next()?;
        let value_at = items.pos();
        items.next()?;
        if k == field {
            return Some(Found {
                start,
                value_at,
                end: items.pos(),
            });
        }
    }
}

fn pairs(b: &[u8]) -> PackedPairs<'_> {
    PackedPairs(Items::new(b))
}

struct PackedPairs<'a>(Items<'a>);

impl<'a> Iterator for PackedPairs<'a> {
    type Item = (&'a [u8], &'a [u8]);
    fn next(&mut self) -> Option<Self::Item> {
        Some((self.0.next()?, self.0.next()?))
    }
}

/// A hash's field/value pairs in order.
pub enum Iter<'a> {
    Packed(Items<'a>),
    Table(indexmap::map::Iter<'a, Vec<u8>, Vec<u8>>),
}

impl<'a> Iterator for Iter<'a> {
    type Item = (&'a [u8], &'a [u8]);
    fn next(&mut self) -> Option<Self::Item> {
        match self {
            Iter::Packed(items) => Some((items.next()?, items.next()?)),
            Iter::Table(t) => t.next().map(|(k, v)| (&k[..], &v[..])),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(entries: usize, value: usize) -> Limits {
        Limits {
            hash_max_listpack_entries: entries,
            hash_max_listpack_value: value,
            ..Limits::default()
        }
    }

    #[test]
    fn packed_keeps_order_and_converts_for_good() {
        let l = limits(3, 8);
        let mut h = HashValue::default();
        assert!(h.set(b"a", b"1", &l));
        assert!(h.set(b"b", b"2", &l));
        assert!(!h.set(b"a", b"10", &l));
        assert!(h.set(b"c", b"3", &l));
        assert!(h.is_listpack());
        let order: Vec<_> = h.iter().collect();
        assert_eq!(
            order,
            vec![(&b"a"[..], &b"10"[..]), (b"b", b"2"), (b"c", b"3")]
        );
        assert_eq!(h.remove(b"b"), Some(b"2".to_vec()));
        assert_eq!(h.remove(b"b"), None);
        assert_eq!(h.keys().collect::<Vec<_>>(), vec![&b"a"[..], b"c"]);
        h.set(b"d", b"4", &l);
        h.set(b"e", b"5", &l);
        assert!(!h.is_listpack(), "four fields pass the limit of three");
        assert_eq!(
            h.keys().collect::<Vec<_>>(),
            vec![&b"a"[..], b"c", b"d", b"e"]
        );
        h.remove(b"d");
        h.remove(b"e");
        assert!(!h.is_listpack(), "a hashtable stays one");
        assert_eq!(h.get(b"c"), Some(&b"3"[..]));
        h.fit(&l);
        assert!(h.is_listpack(), "a loader packs what fits");
        assert_eq!(h.keys().collect::<Vec<_>>(), vec![&b"a"[..], b"c"]);
    }

    #[test]
    fn a_long_value_converts_even_for_an_existing_field() {
        let l = limits(10, 4);
        let mut h = HashValue::from([(&b"f"[..], &b"v"[..])]);
        h.set(b"f", b"12345", &l);
        assert!(!h.is_listpack());
        assert_eq!(h.get(b"f"), Some(&b"12345"[..]));
    }
}
