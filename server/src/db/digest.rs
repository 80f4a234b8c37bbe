//! DEBUG DIGEST and DEBUG DIGEST-VALUE: a 20-byte fingerprint of the dataset or of one value,
//! computed by the same rules as Redis 7.0, so a test suite that compares digests before and
//! after an operation (or between a redlab run and a Redis run) sees equal strings for equal
//! data.
//!
//! The rules, as Redis applies them:
//! - two primitives over SHA1: *xor-in* (`d ^= sha1(bytes)`), which does not depend on order,
//!   and *mix-in* (`d = sha1(d ^ sha1(bytes))`), which does;
//! - a value starts from its type number (4 bytes, big-endian) mixed in, then its contents:
//!   a string mixed in as its text; list elements mixed in from head to tail; set members
//!   xored in; hash fields and zset members each build a private digest over zeros (field
//!   then value, member then score printed with `%.17g`, each mixed in) that is itself
//!   xored in as 20 bytes of data (so hashed once more); stream entries mixed in as
//!   `ms.seq` then each field and value (integers as decimal text throughout);
//! - a key with a deadline gets the text `!!expire!!` xored in at the end (the deadline
//!   itself is not part of it);
//! - a key's digest is its name mixed into zeros, then its value as above; the dataset's
//!   digest mixes in each non-empty database's number (4 bytes, big-endian) in order and
//!   xors in every key's digest (as data, hashed once more), so key order does not matter but the database does.
//!
//! An empty keyspace, and a missing key, digest to twenty zero bytes.

use super::{Db, Entry, Value};

pub type Digest = [u8; 20];

fn sha1(bytes: &[u8]) -> Digest {
    sha1_smol::Sha1::from(bytes).digest().bytes()
}

/// `d ^= sha1(bytes)`: adds an element whose position does not count.
fn xor_in(d: &mut Digest, bytes: &[u8]) {
    for (a, b) in d.iter_mut().zip(sha1(bytes)) {
        *a ^= b;
    }
}

/// `d = sha1(d ^ sha1(bytes))`: adds an element whose position counts.
fn mix_in(d: &mut Digest, bytes: &[u8]) {
    xor_in(d, bytes);
    *d = sha1(d);
}

/// Redis's type numbers (OBJ_STRING ... OBJ_STREAM), which start every value's digest.
fn type_number(v: &Value) -> u32 {
    match v {
        Value::Str(_) => 0,
        Value::List(_) => 1,
        Value::Set(_) => 2,
        Value::ZSet(_) => 3,
        Value::Hash(_) => 4,
        Value::Stream(_) => 6,
    }
}

/// A digest of two parts kept apart from the rest, xored into `d` (hash fields, zset members).
fn xor_pair(d: &mut Digest, first: &[u8], second: &[u8]) {
    let mut own = [0u8; 20];
    mix_in(&mut own, first);
    mix_in(&mut own, second);
    xor_in(d, &own);
}

/// Adds a stored entry's value (and whether it has a deadline) to `d`: DEBUG DIGEST-VALUE
/// is this over zeros.
pub fn add_entry(d: &mut Digest, entry: &Entry) {
    mix_in(d, &type_number(&entry.value).to_be_bytes());
    match &entry.value {
        Value::Str(s) => mix_in(d, s),
        Value::List(l) => l.iter().for_each(|e| mix_in(d, e)),
        Value::Set(s) => s.iter().for_each(|m| xor_in(d, m)),
        Value::Hash(h) => h.iter().for_each(|(f, v)| xor_pair(d, f, v)),
        Value::ZSet(z) => z
            .iter()
            .for_each(|(m, score)| xor_pair(d, m, crate::numfmt::format_g(score, 17).as_bytes())),
        Value::Stream(s) => {
            let mut field = Vec::new();
            let mut value = Vec::new();
            s.visit(
                super::stream::StreamId::MIN,
                super::stream::StreamId::MAX,
                false,
                |node, e| {
                    mix_in(d, format!("{}.{}", e.id.ms, e.id.seq).as_bytes());
                    node.fields(e, |f, v| {
                        field.clear();
                        value.clear();
                        f.write_text(&mut field);
                        v.write_text(&mut value);
                        mix_in(d, &field);
                        mix_in(d, &value);
                    });
                    true
                },
            );
        }
    }
    if entry.expire_at().is_some() {
        xor_in(d, b"!!expire!!");
    }
}

/// DEBUG DIGEST-VALUE for one stored entry (zeros for none).
pub fn of_value(entry: Option<&Entry>) -> Digest {
    let mut d = [0u8; 20];
    if let Some(entry) = entry {
        add_entry(&mut d, entry);
    }
    d
}

/// DEBUG DIGEST over every database, in database order.
pub fn of_dataset(dbs: &[Db]) -> Digest {
    let mut total = [0u8; 20];
    for (idx, db) in dbs.iter().enumerate() {
        let mut entries = db.stored().peekable();
        if entries.peek().is_none() {
            continue;
        }
        mix_in(&mut total, &(idx as u32).to_be_bytes());
        for (key, entry) in entries {
            let mut d = [0u8; 20];
            mix_in(&mut d, key);
            add_entry(&mut d, entry);
            xor_in(&mut total, &d);
        }
    }
    total
}

/// The digest as DEBUG prints it: 40 lowercase hex digits.
pub fn hex(d: &Digest) -> String {
    d.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entry(value: Value, expire_at: Option<i64>) -> Entry {
        Entry::new(value, expire_at)
    }

    #[test]
    fn nothing_digests_to_zeros() {
        assert_eq!(hex(&of_value(None)), "0".repeat(40));
        assert_eq!(hex(&of_dataset(&[Db::new(), Db::new()])), "0".repeat(40));
    }

    #[test]
    fn a_zset_digest_equals_the_one_redis_computes() {
        // Measured on redis-server 7.0.15: ZADD z 1.1 a 2 b; DEBUG DIGEST-VALUE z; DEBUG DIGEST.
        let mut z = crate::db::ZSet::new();
        z.push(b"a", 1.1);
        z.push(b"b", 2.0);
        let e = entry(Value::ZSet(z), None);
        assert_eq!(
            hex(&of_value(Some(&e))),
            "04185ce3beb654ee4e54115d82328f07d38a5f2a"
        );
        let mut db = Db::new();
        db.insert_entry(b"z", e);
        assert_eq!(
            hex(&of_dataset(&[db])),
            "54c337ad5ebea8609c0e99b1884037db278fa482"
        );
    }

    #[test]
    fn a_deadline_changes_the_digest_but_its_time_does_not() {
        let s = || Value::Str(crate::db::strvalue::StrValue::from_slice(b"v"));
        let plain = of_value(Some(&entry(s(), None)));
        let soon = of_value(Some(&entry(s(), Some(1_000))));
        let later = of_value(Some(&entry(s(), Some(2_000))));
        assert_ne!(plain, soon);
        assert_eq!(soon, later);
    }
}
