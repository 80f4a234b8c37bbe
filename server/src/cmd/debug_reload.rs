//! DEBUG RELOAD and DEBUG LOADAOF: the dataset saved and loaded back, as Redis does through
//! its RDB file.
//!
//! redlab writes no file. "The RDB file" is an image kept in the engine: every key as its
//! DUMP payload with its deadline, and the code of every function library, taken by SAVE,
//! BGSAVE and DEBUG RELOAD (unless NOSAVE). Loading it goes through the same decoder as
//! RESTORE, so what a reload changes in Redis changes here too: encodings are chosen afresh
//! (a set emptied down to integers is an intset again), access times restart, and keys past
//! their deadline are not loaded.
//!
//! Redis's loader reads the libraries before the keys. A library that already exists fails
//! the load (`ERR Error trying to load the RDB dump`) unless MERGE allows replacing it. A key
//! that already exists is replaced under MERGE; without it Redis stops the whole server
//! ("Duplicated key found in RDB file"), which redlab answers with the load error instead.

use bytes::Bytes;

use crate::cmd::table::CmdResult;
use crate::db::encoding::Limits;
use crate::db::rdb;
use crate::engine::Engine;
use crate::errors;
use crate::reply::Reply;

/// One saved key: its name, its DUMP payload and its deadline.
type SavedKey = (Vec<u8>, Vec<u8>, Option<i64>);

/// What a save keeps: per database, its keys; then the libraries' code.
#[derive(Clone, Debug, Default)]
pub struct Image {
    dbs: Vec<Vec<SavedKey>>,
    libraries: Vec<Bytes>,
}

/// SAVE / BGSAVE / DEBUG RELOAD: the dataset as it is now becomes the image a reload reads.
pub fn save(e: &mut Engine) {
    let limits = Limits::from_config(&e.config);
    let dbs = e
        .dbs
        .iter()
        .map(|db| {
            db.iter()
                .map(|(k, en)| (k.to_vec(), rdb::dump_entry(en, &limits), en.expire_at))
                .collect()
        })
        .collect();
    let libraries = e
        .scripting
        .libs
        .libs
        .values()
        .map(|l| l.code.clone())
        .collect();
    e.saved_image = Some(Box::new(Image { dbs, libraries }));
    e.dirty = 0;
    e.last_save_s = e.now_ms / 1000;
}

/// DEBUG RELOAD [MERGE] [NOFLUSH] [NOSAVE].
pub fn reload(e: &mut Engine, options: &[Bytes]) -> CmdResult {
    let (mut merge, mut flush, mut save_first) = (false, true, true);
    for o in options {
        if o.eq_ignore_ascii_case(b"merge") {
            merge = true;
        } else if o.eq_ignore_ascii_case(b"noflush") {
            flush = false;
        } else if o.eq_ignore_ascii_case(b"nosave") {
            save_first = false;
        } else {
            return Err(Reply::err(errors::DEBUG_RELOAD_OPTIONS));
        }
    }
    if save_first {
        save(e);
    }
    if flush {
        empty_data(e);
    }
    load(e, merge)
}

/// DEBUG LOADAOF. redlab keeps no append-only file: the dataset it would rebuild is the one
/// in memory, so this is a save and a reload. (Redis with appendonly off exits here.)
pub fn loadaof(e: &mut Engine) -> CmdResult {
    save(e);
    empty_data(e);
    load(e, false)
}

/// Redis's emptyData: every database and every function library gone; WATCHes on existing
/// keys break, as a flush breaks them.
fn empty_data(e: &mut Engine) {
    e.touch_all_watched(None);
    for db in e.dbs.iter_mut() {
        db.clear();
    }
    crate::cmd::functions::flush_all(e);
}

fn load(e: &mut Engine, merge: bool) -> CmdResult {
    let Some(image) = e.saved_image.clone() else {
        return Err(Reply::err(errors::RDB_LOAD_FAILED));
    };
    for code in &image.libraries {
        crate::cmd::functions::install(e, code, merge)
            .map_err(|_| Reply::err(errors::RDB_LOAD_FAILED))?;
    }
    let now = e.now_ms;
    for (index, keys) in image.dbs.iter().enumerate() {
        if index >= e.dbs.len() {
            break;
        }
        for (key, payload, deadline) in keys {
            if deadline.is_some_and(|t| t < now) {
                continue;
            }
            if !merge && e.dbs[index].stored_entry(key).is_some() {
                return Err(Reply::err(errors::RDB_LOAD_FAILED));
            }
            let value = rdb::restore(payload).map_err(|_| Reply::err(errors::RDB_LOAD_FAILED))?;
            let entry = crate::cmd::keys::dump::loaded_entry(e, value, *deadline, now);
            e.dbs[index].insert_entry(key, entry);
        }
    }
    Ok(Reply::ok())
}
