//! `client-output-buffer-limit`: how much unsent output a client may hold before it is
//! disconnected, per client class, as Redis enforces it.
//!
//! A client that never reads (a stalled subscriber, a MONITOR nobody drains) would otherwise
//! make the server hold every message for it forever. The hard limit disconnects at once; the
//! soft limit disconnects a client that stays above it for longer than `soft_seconds`, timed
//! on the engine's clock (so a test's manual clock drives it).

/// The limits of one class; 0 disables a limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct OutputLimit {
    pub hard: u64,
    pub soft: u64,
    pub soft_seconds: u64,
}

/// The classes Redis distinguishes; MONITOR clients count as normal, as in Redis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ClientClass {
    Normal = 0,
    Replica = 1,
    PubSub = 2,
}

/// The three classes' limits, in Redis's CONFIG GET order (normal, slave, pubsub).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct OutputLimits(pub [OutputLimit; 3]);

impl Default for OutputLimits {
    fn default() -> Self {
        OutputLimits([
            OutputLimit {
                hard: 0,
                soft: 0,
                soft_seconds: 0,
            },
            OutputLimit {
                hard: 256 << 20,
                soft: 64 << 20,
                soft_seconds: 60,
            },
            OutputLimit {
                hard: 32 << 20,
                soft: 8 << 20,
                soft_seconds: 60,
            },
        ])
    }
}

const CLASS_NAMES: [&str; 3] = ["normal", "slave", "pubsub"];

impl OutputLimits {
    pub fn get(&self, class: ClientClass) -> OutputLimit {
        self.0[class as usize]
    }

    /// As CONFIG GET prints it: `normal 0 0 0 slave 268435456 67108864 60 pubsub ...`.
    pub fn format(&self) -> String {
        let groups: Vec<String> = CLASS_NAMES
            .iter()
            .zip(self.0.iter())
            .map(|(n, l)| format!("{} {} {} {}", n, l.hard, l.soft, l.soft_seconds))
            .collect();
        groups.join(" ")
    }

    /// Applies CONFIG SET's `<class> <hard> <soft> <soft-seconds>` groups over these limits.
    /// Like Redis, the value is split on single spaces (so "" changes nothing and a doubled
    /// space is an empty class name) and nothing changes unless every group is valid.
    pub fn merge(&self, value: &str) -> Result<OutputLimits, String> {
        let parts: Vec<&str> = if value.is_empty() {
            Vec::new()
        } else {
            value.split(' ').collect()
        };
        if !parts.len().is_multiple_of(4) {
            return Err(crate::errors::CONFIG_BUFFER_LIMIT_ARGS.into());
        }
        let mut out = *self;
        for g in parts.chunks(4) {
            let class = match g[0].to_ascii_lowercase().as_str() {
                "normal" => ClientClass::Normal,
                "slave" | "replica" => ClientClass::Replica,
                "pubsub" => ClientClass::PubSub,
                _ => return Err(crate::errors::CONFIG_BUFFER_LIMIT_CLASS.into()),
            };
            let bad = || crate::errors::CONFIG_BUFFER_LIMIT_VALUES.to_string();
            let hard = super::params::parse_memory(g[1]).ok_or_else(bad)?;
            let soft = super::params::parse_memory(g[2]).ok_or_else(bad)?;
            let secs = crate::numfmt::parse_i64(g[3].as_bytes())
                .filter(|n| *n >= 0)
                .ok_or_else(bad)? as u64;
            out.0[class as usize] = OutputLimit {
                hard,
                soft,
                soft_seconds: secs,
            };
        }
        Ok(out)
    }

    /// Parses what `format` printed (a stored value); unknown text gives the defaults.
    pub fn parse(text: &str) -> OutputLimits {
        OutputLimits::default().merge(text).unwrap_or_default()
    }
}

impl OutputLimit {
    /// Whether a client over the soft limit since `soft_since` has been for too long:
    /// strictly longer than `soft_seconds`, in whole seconds, as Redis counts it.
    pub fn soft_time_up(&self, soft_since: Option<i64>, now_ms: i64) -> bool {
        soft_since.is_some_and(|since| (now_ms - since) / 1000 > self.soft_seconds as i64)
    }

    /// Whether a client holding `used` bytes must be disconnected now. `soft_since` is when it
    /// first went over the soft limit (engine ms), kept by the caller: set here when it goes
    /// over, cleared when it comes back under. Redis's rule: over the soft limit for strictly
    /// longer than `soft_seconds`.
    pub fn exceeded(&self, used: u64, soft_since: &mut Option<i64>, now_ms: i64) -> bool {
        if self.hard > 0 && used >= self.hard {
            return true;
        }
        if self.soft > 0 && used >= self.soft {
            match *soft_since {
                None => {
                    *soft_since = Some(now_ms);
                    false
                }
                Some(_) => self.soft_time_up(*soft_since, now_ms),
            }
        } else {
            *soft_since = None;
            false
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_and_merges_like_redis() {
        let d = OutputLimits::default();
        assert_eq!(
            d.format(),
            "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
        );
        let m = d.merge("normal 1gb 2k 5 replica 100 200 3").unwrap();
        assert_eq!(
            m.format(),
            "normal 1073741824 2000 5 slave 100 200 3 pubsub 33554432 8388608 60"
        );
        assert_eq!(d.merge("").unwrap(), d);
        assert!(d
            .merge("   ")
            .unwrap_err()
            .starts_with("Invalid client class"));
        assert!(d
            .merge("normal 1 2")
            .unwrap_err()
            .starts_with("Wrong number"));
        assert!(d
            .merge("normal 1.5mb 2 3")
            .unwrap_err()
            .starts_with("Error in hard"));
        assert!(d
            .merge("normal 1 2 -1")
            .unwrap_err()
            .starts_with("Error in hard"));
        assert!(d
            .merge("master 1 2 3")
            .unwrap_err()
            .starts_with("Invalid client class"));
        assert_eq!(OutputLimits::parse(&m.format()), m);
    }

    #[test]
    fn soft_limit_counts_time_over_it() {
        let l = OutputLimit {
            hard: 100,
            soft: 10,
            soft_seconds: 2,
        };
        let mut since = None;
        assert!(l.exceeded(100, &mut since, 0));
        assert!(!l.exceeded(10, &mut since, 1000));
        assert!(
            !l.exceeded(50, &mut since, 3000),
            "exactly soft_seconds is not over"
        );
        assert!(l.exceeded(50, &mut since, 3001 + 999));
        assert!(!l.exceeded(5, &mut since, 9000));
        assert_eq!(since, None, "back under the soft limit resets the timer");
        assert!(!OutputLimit::default().exceeded(u64::MAX, &mut None, 0));
    }
}
