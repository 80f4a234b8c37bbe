//! The one typed lookup of a key's value: `lookup::<ListValue>(e, db, key)?` is the list at
//! `key`, `None` when the key does not exist, and Redis's WRONGTYPE error when it holds a
//! value of another type. Every command family reads its keys through it.
//!
//! Both forms expire a key past its deadline first and update its access time, as Redis's
//! `lookupKeyRead` and `lookupKeyWrite` do.

use crate::db::ValueType;
use crate::engine::Engine;
use crate::errors;
use crate::reply::Reply;

/// The value at `key` as a `T`, for reading.
pub(crate) fn lookup<'a, T: ValueType>(
    e: &'a mut Engine,
    db: usize,
    key: &[u8],
) -> Result<Option<&'a T>, Reply> {
    match e.db(db).get(key) {
        None => Ok(None),
        Some(entry) => T::of(&entry.value)
            .map(Some)
            .ok_or_else(|| Reply::err(errors::WRONGTYPE)),
    }
}

/// The value at `key` as a `T`, for changing it in place (the key keeps its TTL).
pub(crate) fn lookup_mut<'a, T: ValueType>(
    e: &'a mut Engine,
    db: usize,
    key: &[u8],
) -> Result<Option<&'a mut T>, Reply> {
    match e.db(db).get_mut(key) {
        None => Ok(None),
        Some(entry) => T::of_mut(&mut entry.value)
            .map(Some)
            .ok_or_else(|| Reply::err(errors::WRONGTYPE)),
    }
}
