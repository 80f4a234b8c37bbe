//! DEBUG RELOAD and DEBUG LOADAOF: the dataset saved and loaded back, as Redis does through
//! its RDB file.
//!
//! "The RDB file" is kept in the engine: the same bytes a primary sends a replica, taken by
//! SAVE, BGSAVE and DEBUG RELOAD (unless NOSAVE); the redlab-server binary also writes them
//! to `dir`/`dbfilename` (`persist`), in-process servers write no file. Loading it goes
//! through the same decoder as RESTORE, so what a reload changes in Redis changes
//! here too: encodings are chosen afresh
//! (a set emptied down to integers is an intset again), access records are kept as the RDB
//! file keeps them (idle times under an LRU policy, counters under LFU), and keys past
//! their deadline are not loaded.
//!
//! Redis's loader reads the libraries before the keys. A library that already exists fails
//! the load (`ERR Error trying to load the RDB dump`) unless MERGE allows replacing it. A key
//! that already exists is replaced under MERGE; without it Redis stops the whole server
//! ("Duplicated key found in RDB file"), which redlab answers with the load error instead.

use bytes::Bytes;

use crate::cmd::table::CmdResult;
use crate::db::rdb::file::read_file;
use crate::engine::Engine;
use crate::errors;
use crate::reply::Reply;

/// SAVE / BGSAVE / DEBUG RELOAD: the dataset as it is now, written as the RDB file a full
/// synchronisation sends (`repl::primary::snapshot`), becomes the file a reload reads, and
/// the file on disk for the binary. Err when the file could not be written (logged).
pub fn save(e: &mut Engine) -> Result<(), ()> {
    take_image(e);
    crate::persist::write_image(e)
}

/// The image alone, in memory (`save` without the disk).
pub(crate) fn take_image(e: &mut Engine) {
    e.saved_image = Some(crate::repl::primary::snapshot(e, 0));
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
        // The image in memory is what is read back, written to disk or not.
        let _ = save(e);
    }
    if flush {
        empty_data(e);
    }
    load(e, merge)
}

/// DEBUG LOADAOF. redlab keeps no append-only file: the dataset it would rebuild is the one
/// in memory, so this is a save and a reload. (Redis with appendonly off exits here.)
pub fn loadaof(e: &mut Engine) -> CmdResult {
    let _ = save(e);
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
    // Valkey 8 adds a hint to the text (valkey-server 8.1).
    let text = if e.profile().has(crate::compat::since::VALKEY_SERVER_API) {
        errors::RDB_LOAD_FAILED_VALKEY
    } else {
        errors::RDB_LOAD_FAILED
    };
    let failed = || Reply::err(text);
    let file = e.saved_image.clone().ok_or_else(failed)?;
    let loaded = read_file(&file).map_err(|_| failed())?;
    for code in &loaded.libraries {
        crate::cmd::functions::install(e, &Bytes::copy_from_slice(code), merge)
            .map_err(|_| failed())?;
    }
    let now = e.now_ms;
    for (index, key, value, deadline, hint) in loaded.keys {
        if index >= e.dbs.len() || deadline.is_some_and(|t| t < now) {
            continue;
        }
        if !merge && e.dbs[index].stored_entry(&key).is_some() {
            return Err(failed());
        }
        let entry = crate::cmd::keys::dump::loaded_entry(e, value, deadline, hint);
        e.dbs[index].insert_entry(&key, entry);
    }
    Ok(Reply::ok())
}
