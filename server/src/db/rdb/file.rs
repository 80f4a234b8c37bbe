//! A whole RDB file, as a primary sends it to a replica in a full synchronisation: the
//! `REDIS0010` header, auxiliary fields, function libraries, each database's keys (with their
//! deadlines), the EOF opcode and a CRC-64 of everything before it.
//!
//! Values are written and read by the same codec as DUMP/RESTORE (`write_object`,
//! `read_object`), so every type redlab dumps travels, and every type it restores loads.

use super::reader::Reader;
use super::{crc64, read_object, write_len, write_object, write_string, RDB_VERSION};
use crate::db::access::{Hint, Lfu};
use crate::db::encoding::Limits;
use crate::db::{Db, Value};

const OPCODE_FUNCTION2: u8 = 245;
const OPCODE_FUNCTION_PRE_GA: u8 = 246;
const OPCODE_MODULE_AUX: u8 = 247;
const OPCODE_IDLE: u8 = 248;
const OPCODE_FREQ: u8 = 249;
const OPCODE_AUX: u8 = 250;
const OPCODE_RESIZEDB: u8 = 251;
const OPCODE_EXPIRETIME_MS: u8 = 252;
const OPCODE_EXPIRETIME: u8 = 253;
const OPCODE_SELECTDB: u8 = 254;
const OPCODE_EOF: u8 = 255;

/// What a file carries besides the keys: the auxiliary fields a replica reads back.
pub struct FileMeta<'a> {
    pub redis_version: &'a str,
    pub ctime_s: i64,
    pub used_mem: u64,
    pub repl_stream_db: usize,
    pub repl_id: &'a str,
    pub repl_offset: i64,
    /// `maxmemory-policy` and the LFU parameters: they decide whether each key's idle time
    /// (an LRU policy) or its counter (an LFU policy) is written, read at `now_ms`.
    pub policy: &'a str,
    pub lfu: Option<Lfu>,
    pub now_ms: i64,
}

/// The RDB file of these databases and function libraries.
pub fn write_file<'a>(
    dbs: &[Db],
    libraries: impl IntoIterator<Item = &'a [u8]>,
    meta: &FileMeta<'_>,
    limits: &Limits,
) -> Vec<u8> {
    let mut out = Vec::new();
    out.extend_from_slice(format!("REDIS{RDB_VERSION:04}").as_bytes());
    let aux = [
        ("redis-ver", meta.redis_version.to_string()),
        ("redis-bits", "64".to_string()),
        ("ctime", meta.ctime_s.to_string()),
        ("used-mem", meta.used_mem.to_string()),
        ("repl-stream-db", meta.repl_stream_db.to_string()),
        ("repl-id", meta.repl_id.to_string()),
        ("repl-offset", meta.repl_offset.to_string()),
        ("aof-base", "0".to_string()),
    ];
    for (k, v) in aux {
        out.push(OPCODE_AUX);
        write_string(&mut out, k.as_bytes());
        write_string(&mut out, v.as_bytes());
    }
    for code in libraries {
        out.push(OPCODE_FUNCTION2);
        write_string(&mut out, code);
    }
    for (idx, db) in dbs.iter().enumerate() {
        if db.is_empty() {
            continue;
        }
        out.push(OPCODE_SELECTDB);
        write_len(&mut out, idx as u64);
        out.push(OPCODE_RESIZEDB);
        write_len(&mut out, db.len() as u64);
        write_len(&mut out, db.expires_len() as u64);
        for (key, en) in db.stored() {
            if let Some(at) = en.expire_at() {
                out.push(OPCODE_EXPIRETIME_MS);
                out.extend_from_slice(&at.to_le_bytes());
            }
            match en.access.saved(meta.policy, meta.lfu, meta.now_ms) {
                Hint::Idle(secs) => {
                    out.push(OPCODE_IDLE);
                    write_len(&mut out, secs as u64);
                }
                Hint::Freq(n) => out.extend_from_slice(&[OPCODE_FREQ, n]),
                Hint::None => {}
            }
            // `write_object` writes the type byte then the value; the key goes between.
            let mut obj = Vec::new();
            write_object(&mut obj, &en.value, limits);
            out.push(obj[0]);
            write_string(&mut out, key);
            out.extend_from_slice(&obj[1..]);
        }
    }
    out.push(OPCODE_EOF);
    let crc = crc64::crc64(0, &out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// A key read back: its database, name, value, deadline and what the file said of its last
/// access. The caller makes the entry (`cmd::keys::dump::loaded_entry`), as RESTORE does,
/// so encodings and access records start the same way on every load path.
pub type LoadedKey = (usize, Vec<u8>, Value, Option<i64>, Hint);

/// A file read back: the keys, the function libraries' code, and the auxiliary fields.
#[derive(Default)]
pub struct Loaded {
    pub keys: Vec<LoadedKey>,
    pub libraries: Vec<Vec<u8>>,
    pub aux: Vec<(Vec<u8>, Vec<u8>)>,
}

/// Why a file could not be loaded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LoadError {
    /// Not an RDB file, or a version newer than redlab reads.
    Header,
    /// A value of a type redlab does not read (a module type, say), or a corrupt file.
    BadFormat,
    /// The trailing CRC-64 does not match.
    Checksum,
}

/// Reads a whole RDB file. Keys past their deadline are kept: a replica waits for its
/// primary's DEL, as Redis's replicas do.
pub fn read_file(file: &[u8]) -> Result<Loaded, LoadError> {
    let mut cursor = Cursor::open(file)?;
    let mut out = Loaded::default();
    while let Some(item) = cursor.next(file)? {
        match item {
            Item::Key(key) => out.keys.push(key),
            Item::Library(code) => out.libraries.push(code),
            Item::Aux(k, v) => out.aux.push((k, v)),
        }
    }
    Ok(out)
}

/// One thing read from a file: a key, a function library's code, or an auxiliary field.
pub enum Item {
    Key(LoadedKey),
    Library(Vec<u8>),
    Aux(Vec<u8>, Vec<u8>),
}

/// Where a read of a file stands, kept apart from the bytes so a load can stop after any
/// item and go on later (the server serving clients in between, as Redis's loader does:
/// `persist::loading`). The checksum is carried along as the bytes are read.
#[derive(Debug)]
pub struct Cursor {
    /// The next byte to read.
    pos: usize,
    version: u16,
    db: usize,
    expire_at: Option<i64>,
    hint: Hint,
    /// CRC-64 of `file[..pos]`.
    crc: u64,
    done: bool,
    /// After a checksum mismatch: (the sum of the bytes read, the sum the file carries).
    mismatch: Option<(u64, u64)>,
}

impl Cursor {
    /// Checks the header; the cursor stands after it.
    pub fn open(file: &[u8]) -> Result<Cursor, LoadError> {
        if file.len() < 9 || &file[..5] != b"REDIS" {
            return Err(LoadError::Header);
        }
        let version: u16 = std::str::from_utf8(&file[5..9])
            .ok()
            .and_then(|v| v.parse().ok())
            .ok_or(LoadError::Header)?;
        if !(1..=RDB_VERSION).contains(&version) {
            return Err(LoadError::Header);
        }
        Ok(Cursor {
            pos: 9,
            version,
            db: 0,
            expire_at: None,
            hint: Hint::None,
            crc: crc64::crc64(0, &file[..9]),
            done: false,
            mismatch: None,
        })
    }

    /// Bytes read so far (the header included).
    pub fn position(&self) -> usize {
        self.pos
    }

    /// After `LoadError::Checksum`: the checksum expected from the bytes, and the one the
    /// file carries (Redis logs both).
    pub fn checksums(&self) -> Option<(u64, u64)> {
        self.mismatch
    }

    /// The next item of `file` (the same bytes `open` saw), or None once the EOF opcode and
    /// the checksum after it have been read and checked.
    pub fn next(&mut self, file: &[u8]) -> Result<Option<Item>, LoadError> {
        if self.done {
            return Ok(None);
        }
        let start = self.pos;
        let mut r = Reader::new(file.get(start..).ok_or(LoadError::BadFormat)?);
        let item = self.read_item(&mut r);
        self.pos = file.len() - r.remaining();
        self.crc = crc64::crc64(self.crc, &file[start..self.pos]);
        match item? {
            Some(item) => Ok(Some(item)),
            None => {
                self.done = true;
                // Version 5 on carries a checksum; zero means the writer turned it off.
                if self.version >= 5 {
                    let sum = r.take(8).ok_or(LoadError::BadFormat)?;
                    if sum != [0u8; 8] && sum != self.crc.to_le_bytes() {
                        let got = u64::from_le_bytes(sum.try_into().unwrap_or_default());
                        self.mismatch = Some((self.crc, got));
                        return Err(LoadError::Checksum);
                    }
                }
                Ok(None)
            }
        }
    }

    /// Reads opcodes up to the next item; None at the EOF opcode.
    fn read_item(&mut self, r: &mut Reader<'_>) -> Result<Option<Item>, LoadError> {
        loop {
            let op = r.byte().ok_or(LoadError::BadFormat)?;
            match op {
                OPCODE_EOF => return Ok(None),
                OPCODE_SELECTDB => self.db = r.len().ok_or(LoadError::BadFormat)?,
                OPCODE_RESIZEDB => {
                    r.u64_len().ok_or(LoadError::BadFormat)?;
                    r.u64_len().ok_or(LoadError::BadFormat)?;
                }
                OPCODE_AUX => {
                    let k = r.string().ok_or(LoadError::BadFormat)?;
                    let v = r.string().ok_or(LoadError::BadFormat)?;
                    return Ok(Some(Item::Aux(k, v)));
                }
                OPCODE_EXPIRETIME_MS => {
                    let b = r.take(8).ok_or(LoadError::BadFormat)?;
                    let ms = i64::from_le_bytes(b.try_into().map_err(|_| LoadError::BadFormat)?);
                    self.expire_at = Some(ms);
                }
                OPCODE_EXPIRETIME => {
                    let b = r.take(4).ok_or(LoadError::BadFormat)?;
                    let s = i32::from_le_bytes(b.try_into().map_err(|_| LoadError::BadFormat)?);
                    self.expire_at = Some(i64::from(s) * 1000);
                }
                OPCODE_IDLE => {
                    let secs = r.u64_len().ok_or(LoadError::BadFormat)?;
                    self.hint = Hint::Idle(i64::try_from(secs).unwrap_or(i64::MAX));
                }
                OPCODE_FREQ => self.hint = Hint::Freq(r.byte().ok_or(LoadError::BadFormat)?),
                OPCODE_FUNCTION2 => {
                    let code = r.string().ok_or(LoadError::BadFormat)?;
                    return Ok(Some(Item::Library(code)));
                }
                OPCODE_FUNCTION_PRE_GA | OPCODE_MODULE_AUX => return Err(LoadError::BadFormat),
                t => {
                    let key = r.string().ok_or(LoadError::BadFormat)?;
                    let value = read_object(r, t).ok_or(LoadError::BadFormat)?;
                    let hint = std::mem::replace(&mut self.hint, Hint::None);
                    return Ok(Some(Item::Key((
                        self.db,
                        key,
                        value,
                        self.expire_at.take(),
                        hint,
                    ))));
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::db::encoding::Limits;

    #[test]
    fn a_file_reads_back_its_keys_deadlines_and_libraries() {
        let mut dbs = vec![Db::new(), Db::new(), Db::new()];
        dbs[0].set(b"s", Value::Str(b"hello".to_vec().into()));
        dbs[2].set_with_expire(
            b"t",
            Value::Str(b"12".to_vec().into()),
            Some(1_900_000_000_000),
        );
        let meta = FileMeta {
            redis_version: "7.0.15",
            ctime_s: 1,
            used_mem: 2,
            repl_stream_db: 0,
            repl_id: "x",
            repl_offset: 3,
            policy: "noeviction",
            lfu: None,
            now_ms: 0,
        };
        let lib: &[u8] = b"#!lua name=l\nredis.register_function('f', function() end)";
        let file = write_file(&dbs, [lib], &meta, &Limits::default());
        assert!(file.starts_with(b"REDIS0010"));
        let loaded = read_file(&file).unwrap();
        assert_eq!(loaded.libraries, vec![lib.to_vec()]);
        let keys: Vec<_> = loaded
            .keys
            .iter()
            .map(|(db, k, _, at, _)| (*db, k.clone(), *at))
            .collect();
        assert_eq!(
            keys,
            vec![
                (0, b"s".to_vec(), None),
                (2, b"t".to_vec(), Some(1_900_000_000_000))
            ]
        );
        let mut bad = file.clone();
        let n = bad.len();
        bad[n - 1] ^= 1;
        assert_eq!(read_file(&bad).err(), Some(LoadError::Checksum));
        assert_eq!(read_file(b"NOTRDB").err(), Some(LoadError::Header));
    }
}
