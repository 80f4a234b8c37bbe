//! Settings commands read all the time, parsed from the configuration once per change of it.
//!
//! The encoding limits (`*-max-listpack-*`, read by every write to a hash or sorted set) and
//! min-replicas-to-write (read before every command) live in `Config::extra` under their
//! names; looking them up there is a dozen string comparisons each, paid by every call. They
//! are kept here instead, refreshed when `Config::generation` moves (every `Config::set`
//! bumps it), as the slow log and the latency monitor keep their parameters.

use std::cell::Cell;

use super::Config;
use crate::db::encoding::Limits;

/// The values, as of one configuration generation.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Values {
    pub limits: Limits,
    /// min-replicas-to-write: 0 is off.
    pub min_replicas_to_write: u64,
    /// min-replicas-max-lag, in seconds.
    pub min_replicas_max_lag: u64,
}

impl Values {
    fn of(config: &Config) -> Values {
        let param = |name: &str| config.extra.get(name).and_then(|v| v.parse::<u64>().ok());
        Values {
            limits: Limits::from_config(config),
            min_replicas_to_write: param("min-replicas-to-write").unwrap_or(0),
            min_replicas_max_lag: param("min-replicas-max-lag").unwrap_or(10),
        }
    }
}

/// The cache: a `Cell`, so readers that hold the engine shared (`&Engine`) refresh it too.
#[derive(Debug, Default)]
pub(crate) struct Derived {
    at: Cell<Option<(u64, Values)>>,
}

impl Derived {
    /// The values for `config` as it is now.
    pub(crate) fn get(&self, config: &Config) -> Values {
        match self.at.get() {
            Some((generation, v)) if generation == config.generation => v,
            _ => {
                let v = Values::of(config);
                self.at.set(Some((config.generation, v)));
                v
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_set_parameter_is_seen_at_the_next_read() {
        let mut c = Config::default();
        let d = Derived::default();
        assert_eq!(d.get(&c).limits.zset_max_listpack_entries, 128);
        assert_eq!(d.get(&c).min_replicas_to_write, 0);
        c.set_by_name("zset-max-ziplist-entries", "7").unwrap();
        c.set_by_name("min-replicas-to-write", "2").unwrap();
        assert_eq!(d.get(&c).limits.zset_max_listpack_entries, 7);
        assert_eq!(d.get(&c).min_replicas_to_write, 2);
        assert_eq!(d.get(&c).min_replicas_max_lag, 10);
    }
}
