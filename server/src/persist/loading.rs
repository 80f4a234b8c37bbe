//! Loading the RDB file at start while clients are served, as redis-server does: the load
//! runs on the server thread in steps, and between two steps the shell serves the clients
//! (Redis's processEventsWhileBlocked every `loading-process-events-interval-bytes`). While
//! it runs, INFO shows `loading:1` with the loading_* fields, commands without the `loading`
//! flag answer -LOADING (`admission`), and CONFIG SET refuses the parameters Redis marks
//! DENY_LOADING_CONFIG.
//!
//! `key-load-delay` slows the load down for tests, per key as Redis's debugDelay does: a
//! positive value sleeps that many microseconds, a negative value -N sleeps one
//! microsecond on one key in N (on average), 0 not at all. The sleep holds the server
//! thread, as Redis's usleep holds its only thread.

use bytes::Bytes;

use crate::db::rdb::file::{Cursor, Item, LoadError};
use crate::engine::Engine;

/// A load in progress: the file's bytes and where the read stands.
pub(crate) struct Loading {
    file: Vec<u8>,
    cursor: Cursor,
    /// When the load started: Unix seconds (INFO loading_start_time) and the monotonic clock
    /// ("DB loaded from disk: ... seconds").
    started_s: i64,
    started_us: u64,
    /// The used-mem auxiliary field: memory the dataset took where it was saved.
    rdb_used_mem: u64,
    /// Drives a negative key-load-delay's one-in-N sleeps (Redis uses rand()).
    delay_draws: u64,
}

/// Keys loaded and keys skipped as expired by the last load (INFO rdb_last_load_keys_*),
/// moving while a load runs.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct LoadCounts {
    pub loaded: u64,
    pub expired: u64,
}

/// How a load ended badly: the lines Redis logs before it exits.
pub(crate) type LoadFailure = Vec<String>;

impl Engine {
    /// Whether the RDB file is being loaded (INFO loading:1).
    pub(crate) fn is_loading(&self) -> bool {
        self.loading.is_some()
    }

    /// Starts loading `file`; the keys come in with `load_step`. Err (the lines to log) when
    /// it is not an RDB file redlab reads.
    pub(crate) fn begin_loading(&mut self, file: Vec<u8>) -> Result<(), LoadFailure> {
        let cursor =
            Cursor::open(&file).map_err(|e| vec![failure_line(e, 0), TERMINATING.into()])?;
        self.load_counts = LoadCounts::default();
        self.loading = Some(Box::new(Loading {
            file,
            cursor,
            started_s: self.clock.now_ms() / 1000,
            started_us: crate::clock::monotonic_us(),
            rdb_used_mem: 0,
            delay_draws: 0,
        }));
        Ok(())
    }

    /// Loads up to the next multiple of `loading-process-events-interval-bytes` (at least
    /// one item). Ok(true) while more remains; Ok(false) once the file is loaded, the
    /// closing lines logged and `loading` off. Err ends the load (the lines to log).
    pub(crate) fn load_step(&mut self) -> Result<bool, LoadFailure> {
        let Some(mut state) = self.loading.take() else {
            return Ok(false);
        };
        let interval = self.config_i64("loading-process-events-interval-bytes", 2 << 20);
        let interval = usize::try_from(interval.max(1)).unwrap_or(usize::MAX);
        let delay = self.config_i64("key-load-delay", 0);
        let target = (state.cursor.position() / interval + 1).saturating_mul(interval);
        loop {
            let item = {
                let Loading { file, cursor, .. } = &mut *state;
                cursor.next(file).map_err(|e| failure(e, cursor))?
            };
            match item {
                None => {
                    self.finish_loading(&state);
                    return Ok(false);
                }
                Some(Item::Aux(k, v)) => note_aux(&mut state, &k, &v, self.clock.now_ms()),
                Some(Item::Library(code)) => {
                    if let Err(err) =
                        crate::cmd::functions::install(self, &Bytes::from(code), false)
                    {
                        let text = err.error_text().unwrap_or_default().into_owned();
                        return Err(vec![format!("Failed loading library: {text}")]);
                    }
                }
                Some(Item::Key((index, key, value, deadline, hint))) => {
                    self.load_key(index, &key, value, deadline, hint);
                    key_delay(&mut state, delay);
                }
            }
            if state.cursor.position() >= target {
                break;
            }
        }
        self.loading = Some(state);
        Ok(true)
    }

    /// One key into its database; a key already past its deadline is counted and dropped,
    /// as a primary loading its file does.
    fn load_key(
        &mut self,
        index: usize,
        key: &[u8],
        value: crate::db::Value,
        deadline: Option<i64>,
        hint: crate::db::access::Hint,
    ) {
        if index >= self.dbs.len() {
            return;
        }
        if deadline.is_some_and(|t| t < self.clock.now_ms()) {
            self.load_counts.expired += 1;
            return;
        }
        let entry = crate::cmd::keys::dump::loaded_entry(self, value, deadline, hint);
        self.dbs[index].insert_entry(key, entry);
        if deadline.is_some() && index < 64 {
            self.maybe_expiring |= 1 << index;
        }
        self.load_counts.loaded += 1;
    }

    fn finish_loading(&mut self, state: &Loading) {
        let secs = crate::clock::monotonic_us().saturating_sub(state.started_us) as f64 / 1e6;
        tracing::info!(
            "Done loading RDB, keys loaded: {}, keys expired: {}.",
            self.load_counts.loaded,
            self.load_counts.expired
        );
        tracing::info!("DB loaded from disk: {:.3} seconds", secs);
        self.dirty = 0;
        self.last_save_s = self.clock.now_ms() / 1000;
    }

    /// INFO persistence's loading_* fields, shown while a load runs (Redis's order and
    /// formulas, its ETA included).
    pub(crate) fn loading_fields(&self) -> Option<Vec<(&'static str, String)>> {
        let s = self.loading.as_deref()?;
        let total = s.file.len() as u64;
        let loaded = s.cursor.position() as u64;
        let perc = if total > 0 {
            loaded as f64 / total as f64 * 100.0
        } else {
            0.0
        };
        let remaining = if total > 0 { total - loaded } else { 1 };
        let elapsed = (self.clock.now_ms() / 1000 - s.started_s).max(0) as u64;
        let eta = if elapsed == 0 {
            1
        } else {
            elapsed.saturating_mul(remaining) / (loaded + 1)
        };
        Some(vec![
            ("loading_start_time", s.started_s.to_string()),
            ("loading_total_bytes", total.to_string()),
            ("loading_rdb_used_mem", s.rdb_used_mem.to_string()),
            ("loading_loaded_bytes", loaded.to_string()),
            ("loading_loaded_perc", format!("{perc:.2}")),
            ("loading_eta_seconds", eta.to_string()),
        ])
    }

    fn config_i64(&self, name: &'static str, default: i64) -> i64 {
        self.config
            .stored(name)
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    }
}

/// The auxiliary fields Redis logs as it meets them.
fn note_aux(state: &mut Loading, k: &[u8], v: &[u8], now_ms: i64) {
    let text = String::from_utf8_lossy(v);
    match k {
        b"redis-ver" => tracing::info!("Loading RDB produced by version {}", text),
        b"ctime" => {
            let age = now_ms / 1000 - text.parse::<i64>().unwrap_or(0);
            tracing::info!("RDB age {} seconds", age.max(0));
        }
        b"used-mem" => {
            state.rdb_used_mem = text.parse().unwrap_or(0);
            tracing::info!(
                "RDB memory usage when created {:.2} Mb",
                state.rdb_used_mem as f64 / 1024.0 / 1024.0
            );
        }
        _ => {}
    }
}

/// Redis's debugDelay after each key (see the module documentation).
fn key_delay(state: &mut Loading, delay: i64) {
    let us = match delay {
        0 => return,
        d if d > 0 => d as u64,
        d => {
            // A cheap spread of draws (splitmix64) for "one key in N".
            state.delay_draws = state.delay_draws.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state.delay_draws;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^= z >> 31;
            u64::from(z.is_multiple_of(d.unsigned_abs()))
        }
    };
    if us > 0 {
        std::thread::sleep(std::time::Duration::from_micros(us));
    }
}

/// Redis's last line before it exits on a file it cannot load.
const TERMINATING: &str = "Terminating server after rdb file reading failure.";

/// The lines Redis logs for a file it cannot load, before it exits.
fn failure(err: LoadError, cursor: &Cursor) -> LoadFailure {
    let mut lines = Vec::new();
    if let (LoadError::Checksum, Some((expected, got))) = (err, cursor.checksums()) {
        lines.push(format!(
            "Wrong RDB checksum expected: ({expected:x}) but got ({got:x}). Aborting now."
        ));
    }
    lines.push(failure_line(err, cursor.position()));
    lines.push(TERMINATING.into());
    lines
}

fn failure_line(err: LoadError, offset: usize) -> String {
    let reason = match err {
        LoadError::Header => "Wrong signature trying to load DB from file",
        LoadError::Checksum => "RDB CRC error",
        LoadError::BadFormat => "Short read or OOM loading DB. Unrecoverable error",
    };
    format!("Internal error in RDB reading offset {offset} -> {reason}")
}

#[cfg(test)]
mod tests {
    use crate::reply::Reply;
    use crate::{Config, Engine};

    /// Key i's value: `size` letters LZF cannot shrink much, so the file is about n * size.
    fn value(i: usize, size: usize) -> String {
        (0..size)
            .map(|j| (b'a' + ((i * 7 + j * 13 + j * j) % 26) as u8) as char)
            .collect()
    }

    /// The RDB file of an engine holding `n` keys of `size` bytes, and one more key that is
    /// past its deadline by the time it is loaded (`wait_past_deadline`).
    fn file_of(n: usize, size: usize) -> Vec<u8> {
        let mut e = Engine::new(Config::default());
        for i in 0..n {
            let k = format!("key:{i}");
            assert_eq!(
                e.execute(1, &["SET", k.as_str(), &value(i, size)]),
                Reply::ok()
            );
        }
        let now = e.clock.now_ms();
        e.execute(1, &["SET", "gone", "x", "PXAT", &(now + 50).to_string()]);
        crate::repl::primary::snapshot(&e, 0)
    }

    fn info_field(e: &mut Engine, field: &str) -> Option<String> {
        let (Reply::Bulk(text) | Reply::Verbatim(_, text)) = e.execute(1, &["INFO", "persistence"])
        else {
            panic!("INFO")
        };
        let text = String::from_utf8_lossy(&text).into_owned();
        text.lines()
            .find_map(|l| l.strip_prefix(&format!("{field}:")).map(str::to_string))
    }

    fn wait_past_deadline(e: &Engine) {
        let until = e.clock.now_ms() + 120;
        while e.clock.now_ms() < until {
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
    }

    #[test]
    fn a_load_runs_in_steps_and_serves_loading_commands_between_them() {
        let file = file_of(200, 100);
        let total = file.len();
        let mut config = Config::default();
        // As Redis's test suite sets it: `dir` is protected before it is refused as loading.
        config
            .set_by_name("enable-protected-configs", "yes")
            .unwrap();
        let mut e = Engine::new(config);
        e.execute(
            1,
            &[
                "CONFIG",
                "SET",
                "loading-process-events-interval-bytes",
                "1024",
            ],
        );
        wait_past_deadline(&e);
        e.begin_loading(file).unwrap();
        assert!(
            e.load_step().unwrap(),
            "more than one step for a 20 KB file"
        );
        assert_eq!(info_field(&mut e, "loading").as_deref(), Some("1"));
        assert_eq!(
            info_field(&mut e, "loading_total_bytes"),
            Some(total.to_string())
        );
        let loaded: usize = info_field(&mut e, "loading_loaded_bytes")
            .unwrap()
            .parse()
            .unwrap();
        assert!(loaded >= 1024 && loaded < total, "{loaded} of {total}");
        let refused = Reply::err(crate::errors::LOADING);
        assert_eq!(e.execute(1, &["PING"]), refused);
        assert_eq!(e.execute(1, &["GET", "key:1"]), refused);
        assert_eq!(e.execute(1, &["CONFIG", "SET", "dir", "/tmp"]), refused);
        // Refused before the duplicate and the value are looked at, as redis-server 7.0.15.
        assert_eq!(
            e.execute(1, &["CONFIG", "SET", "dir", "x", "dir", "y"]),
            refused
        );
        assert_eq!(
            e.execute(1, &["CONFIG", "SET", "appendonly", "yes"]),
            refused
        );
        assert_eq!(
            e.execute(1, &["CONFIG", "SET", "loglevel", "debug"]),
            Reply::ok()
        );
        assert_eq!(e.execute(1, &["SELECT", "0"]), Reply::ok());
        let mut steps = 1;
        while e.load_step().unwrap() {
            steps += 1;
        }
        // One step per kilobyte crossed (each key is under one).
        assert!(steps >= total / 1024, "{steps} steps for {total} bytes");
        assert_eq!(info_field(&mut e, "loading").as_deref(), Some("0"));
        assert_eq!(info_field(&mut e, "loading_total_bytes"), None);
        assert_eq!(
            info_field(&mut e, "rdb_last_load_keys_loaded").as_deref(),
            Some("200")
        );
        assert_eq!(
            info_field(&mut e, "rdb_last_load_keys_expired").as_deref(),
            Some("1")
        );
        assert_eq!(e.execute(1, &["DBSIZE"]), Reply::Int(200));
        assert_eq!(e.execute(1, &["GET", "key:7"]), Reply::bulk(value(7, 100)));
        assert_eq!(e.execute(1, &["PING"]), Reply::Status("PONG".into()));
    }

    #[test]
    fn the_default_interval_loads_a_small_file_in_one_step() {
        let file = file_of(100, 10);
        let mut e = Engine::new(Config::default());
        wait_past_deadline(&e);
        e.begin_loading(file).unwrap();
        assert!(!e.load_step().unwrap());
        assert!(!e.is_loading());
        assert_eq!(e.execute(1, &["DBSIZE"]), Reply::Int(100));
    }

    #[test]
    fn a_damaged_file_fails_the_load() {
        let mut file = file_of(10, 10);
        let n = file.len();
        file[n - 1] ^= 1;
        let mut e = Engine::new(Config::default());
        e.begin_loading(file).unwrap();
        let lines = e.load_step().unwrap_err();
        assert!(
            lines[0].starts_with("Wrong RDB checksum expected: ("),
            "{lines:?}"
        );
        assert!(lines[1].ends_with("-> RDB CRC error"), "{lines:?}");
        assert!(!e.is_loading());
        assert!(e.begin_loading(b"NOTRDB0000".to_vec()).is_err());
    }
}
