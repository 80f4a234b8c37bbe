//! `oom-score-adj` and `oom-score-adj-values`: redis-server sets its own Linux OOM score
//! (`/proc/self/oom_score_adj`) by role, so that under memory pressure the kernel kills a
//! replica before the primary. Only the redlab-server binary does this
//! (`Config::manages_process`): an in-process server shares its process with the test, whose
//! score is not the server's to change.
//!
//! As Redis's setOOMScoreAdj: the first adjustment remembers the score the process had;
//! `relative` (and `yes`) adds the class's value to it, `absolute` uses the value, both
//! clamped to the kernel's -1000..1000; turning the option off writes the remembered score
//! back. With the option off nothing is touched, whatever the values say.

use std::path::Path;
use std::sync::Mutex;

use crate::config::Config;

/// The process classes of `oom-score-adj-values`, in its order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Class {
    Primary = 0,
    Replica = 1,
    /// A background child (redlab has none; kept for the values' meaning).
    BackgroundChild = 2,
}

/// What a process remembers between adjustments: the score it had before the first one,
/// while the option is on.
#[derive(Debug, Default)]
pub struct Adjuster {
    base: Option<i64>,
}

/// This process's adjuster: process-wide, as the file it writes.
static PROCESS: Mutex<Adjuster> = Mutex::new(Adjuster { base: None });

const PROC_FILE: &str = "/proc/self/oom_score_adj";

/// Applies the configuration to this process, for a server that is a primary or, with
/// `replica`, a replica. Nothing for an in-process server. Err is the line Redis logs.
pub fn apply(config: &Config, replica: bool) -> Result<(), String> {
    if !config.manages_process {
        return Ok(());
    }
    let class = if replica {
        Class::Replica
    } else {
        Class::Primary
    };
    let mode = config.get_by_name("oom-score-adj").unwrap_or_default();
    let values = config
        .get_by_name("oom-score-adj-values")
        .unwrap_or_default();
    PROCESS.lock().unwrap_or_else(|p| p.into_inner()).apply(
        Path::new(PROC_FILE),
        &mode,
        &values,
        class,
    )
}

impl Adjuster {
    /// Redis's setOOMScoreAdj against the file at `path`.
    pub fn apply(
        &mut self,
        path: &Path,
        mode: &str,
        values: &str,
        class: Class,
    ) -> Result<(), String> {
        let score = if mode == "no" {
            match self.base.take() {
                Some(base) => base,
                None => return Ok(()),
            }
        } else {
            let base = match self.base {
                Some(b) => b,
                None => {
                    let text = std::fs::read_to_string(path).map_err(|e| {
                        format!(
                            "Unable to read oom_score_adj: {}",
                            crate::errors::strerror(&e)
                        )
                    })?;
                    let b = crate::cmd::args::atoi(text.trim().as_bytes());
                    self.base = Some(b);
                    b
                }
            };
            let value = values
                .split_whitespace()
                .nth(class as usize)
                .and_then(|v| v.parse::<i64>().ok())
                .unwrap_or(0);
            let score = if mode == "absolute" {
                value
            } else {
                value + base
            };
            score.clamp(-1000, 1000)
        };
        std::fs::write(path, format!("{score}\n")).map_err(|e| {
            format!(
                "Unable to write oom_score_adj: {}",
                crate::errors::strerror(&e)
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(score: i64) -> std::path::PathBuf {
        let p = std::env::temp_dir().join(format!("redlab-oom-{}-{score}", std::process::id()));
        std::fs::write(&p, format!("{score}\n")).unwrap();
        p
    }

    fn read(p: &Path) -> String {
        std::fs::read_to_string(p).unwrap().trim().to_string()
    }

    /// The cases of Redis's unit/oom-score-adj that need no child process.
    #[test]
    fn scores_follow_redis_and_the_old_score_comes_back() {
        let p = file(22);
        let mut a = Adjuster::default();
        // Off: the values alone touch nothing.
        a.apply(&p, "no", "1 1 1", Class::Primary).unwrap();
        assert_eq!(read(&p), "22");
        a.apply(&p, "yes", "9 9 9", Class::Primary).unwrap();
        assert_eq!(read(&p), "31");
        // The base is the score before the first adjustment, not the adjusted one.
        a.apply(&p, "relative", "15 20 30", Class::Primary).unwrap();
        assert_eq!(read(&p), "37");
        a.apply(&p, "relative", "15 20 30", Class::Replica).unwrap();
        assert_eq!(read(&p), "42");
        a.apply(&p, "absolute", "9 9 9", Class::Primary).unwrap();
        assert_eq!(read(&p), "9");
        a.apply(&p, "relative", "2000 0 0", Class::Primary).unwrap();
        assert_eq!(read(&p), "1000");
        a.apply(&p, "no", "2000 0 0", Class::Primary).unwrap();
        assert_eq!(read(&p), "22");
        // Off again: nothing more is written.
        std::fs::write(&p, "5\n").unwrap();
        a.apply(&p, "no", "0 0 0", Class::Primary).unwrap();
        assert_eq!(read(&p), "5");
        std::fs::remove_file(&p).unwrap();
    }

    #[test]
    fn a_file_that_cannot_be_read_is_reported_as_redis_logs_it() {
        let missing = std::env::temp_dir().join("redlab-oom-no-such-dir/oom_score_adj");
        let mut a = Adjuster::default();
        assert_eq!(
            a.apply(&missing, "yes", "0 0 0", Class::Primary),
            Err("Unable to read oom_score_adj: No such file or directory".to_string())
        );
    }
}
