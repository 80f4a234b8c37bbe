//! Compatibility profiles: which server, at which version, redlab answers as.
//!
//! Teams run Redis 7.0, 7.2, 7.4 or 8.x, or Valkey 7.2/8.1. A profile decides what a client
//! can see of the version: INFO's version fields, HELLO's server and version,
//! `redis.REDIS_VERSION` in scripts, and which commands and options exist. A command newer
//! than the profile gets exactly the unknown-command (or unknown-subcommand) error that
//! version gives, and is recorded in the profile's report (`report`), so a test suite can fail
//! when the code under test uses something its production server lacks.
//!
//! When each command arrived is one more column of the command table (`Command::since`),
//! filled from `since::LATER` for the commands newer than Redis 7.0.

pub mod command;
pub mod gate;
pub mod info_later;
pub mod report;
pub mod since;

pub use report::{Refusal, Report};
pub use since::Since;

/// The server family: Redis, or its fork Valkey, whose versions number on their own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Family {
    Redis,
    Valkey,
}

/// One server version redlab can answer as.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum Profile {
    /// Redis 7.0.15, the version redlab was written against and is checked against.
    #[default]
    Redis70,
    Redis72,
    Redis74,
    Redis80,
    Redis82,
    Redis84,
    /// Valkey 7.2: Redis 7.2.4 renamed, with its own version numbers.
    Valkey72,
    /// Valkey 8.1, checked against a real valkey-server 8.1 (tests/conformance.rs).
    Valkey81,
}

impl Profile {
    /// Every profile, oldest first within each family.
    pub const ALL: [Profile; 8] = [
        Profile::Redis70,
        Profile::Redis72,
        Profile::Redis74,
        Profile::Redis80,
        Profile::Redis82,
        Profile::Redis84,
        Profile::Valkey72,
        Profile::Valkey81,
    ];

    /// The name `--compat` and `ServerBuilder::compat` take: `redis-7.4`, `valkey-8.1`.
    pub fn name(self) -> &'static str {
        match self {
            Profile::Redis70 => "redis-7.0",
            Profile::Redis72 => "redis-7.2",
            Profile::Redis74 => "redis-7.4",
            Profile::Redis80 => "redis-8.0",
            Profile::Redis82 => "redis-8.2",
            Profile::Redis84 => "redis-8.4",
            Profile::Valkey72 => "valkey-7.2",
            Profile::Valkey81 => "valkey-8.1",
        }
    }

    /// The profile named `name` (case-insensitive), or None.
    pub fn parse(name: &str) -> Option<Profile> {
        Profile::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(name.trim()))
    }

    pub fn family(self) -> Family {
        match self {
            Profile::Valkey72 | Profile::Valkey81 => Family::Valkey,
            _ => Family::Redis,
        }
    }

    /// Major and minor version as one number (7.4 is 74), within the family.
    pub fn level(self) -> u16 {
        match self {
            Profile::Redis70 => 70,
            Profile::Redis72 | Profile::Valkey72 => 72,
            Profile::Redis74 => 74,
            Profile::Redis80 => 80,
            Profile::Valkey81 => 81,
            Profile::Redis82 => 82,
            Profile::Redis84 => 84,
        }
    }

    /// INFO's `redis_version` and the scripts' `redis.REDIS_VERSION`. Valkey keeps answering
    /// 7.2.4 there (the Redis version it forked from), so clients that test it keep working.
    pub fn redis_version(self) -> &'static str {
        match self {
            Profile::Redis70 => "7.0.15",
            Profile::Redis72 => "7.2.11",
            Profile::Redis74 => "7.4.6",
            Profile::Redis80 => "8.0.4",
            Profile::Redis82 => "8.2.2",
            Profile::Redis84 => "8.4.0",
            Profile::Valkey72 | Profile::Valkey81 => "7.2.4",
        }
    }

    /// Valkey's own version (INFO `valkey_version`, HELLO `version`); None for Redis.
    pub fn valkey_version(self) -> Option<&'static str> {
        match self {
            Profile::Valkey72 => Some("7.2.11"),
            Profile::Valkey81 => Some("8.1.8"),
            _ => None,
        }
    }

    /// HELLO's `server` field.
    pub fn server_name(self) -> &'static str {
        match self.family() {
            Family::Redis => "redis",
            Family::Valkey => "valkey",
        }
    }

    /// Whether doubles are printed with the shortest digits that read back (Redis 7.2's
    /// switch from `%.17g` to `fpconv_dtoa`, which Valkey inherited): ZSCORE of 0.1 answers
    /// `0.1` instead of `0.10000000000000001`.
    pub fn shortest_doubles(self) -> bool {
        self.family() == Family::Valkey || self.level() >= 72
    }

    /// The RDB version in this version's DUMP payloads, and the newest its RESTORE accepts:
    /// 10 in Redis 7.0, 11 from Redis 7.2 (and in Valkey 7.2 and 8.1, as valkey-server 8.1
    /// answers), 12 from Redis 7.4 (hash field expiration). The payload's body keeps redlab's
    /// encodings, which every one of these versions reads.
    pub fn rdb_version(self) -> u16 {
        match self {
            Profile::Redis70 => 10,
            Profile::Redis72 | Profile::Valkey72 | Profile::Valkey81 => 11,
            Profile::Redis74 | Profile::Redis80 | Profile::Redis82 | Profile::Redis84 => 12,
        }
    }

    /// Whether this profile has what arrived at `since`.
    pub fn has(self, since: Since) -> bool {
        let arrived = match self.family() {
            Family::Redis => since.redis,
            Family::Valkey => since.valkey,
        };
        self.level() >= arrived
    }

    /// The profiles that have what arrived at `since`, by name (for the report).
    pub fn having(since: Since) -> Vec<&'static str> {
        Profile::ALL
            .into_iter()
            .filter(|p| p.has(since))
            .map(Profile::name)
            .collect()
    }
}

impl std::fmt::Display for Profile {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl std::str::FromStr for Profile {
    type Err = String;

    fn from_str(s: &str) -> Result<Profile, String> {
        Profile::parse(s).ok_or_else(|| {
            let names: Vec<&str> = Profile::ALL.iter().map(|p| p.name()).collect();
            format!(
                "unknown compatibility profile '{s}' (one of: {})",
                names.join(", ")
            )
        })
    }
}

/// `redis.REDIS_VERSION_NUM` for a version text: 0x00MMmmpp, as Redis computes it.
pub fn version_num(version: &str) -> u32 {
    let mut parts = version
        .split('.')
        .map(|p| p.parse::<u32>().unwrap_or(0).min(255));
    let major = parts.next().unwrap_or(0);
    let minor = parts.next().unwrap_or(0);
    let patch = parts.next().unwrap_or(0);
    (major << 16) | (minor << 8) | patch
}

#[cfg(test)]
mod tests;
#[cfg(test)]
mod tests_72;
#[cfg(test)]
mod tests_72_more;
#[cfg(test)]
mod tests_72_replies;
#[cfg(test)]
mod tests_82;
#[cfg(test)]
mod tests_categories;
#[cfg(test)]
mod tests_docs_72;
#[cfg(test)]
mod tests_info_later;
#[cfg(test)]
mod tests_later;
#[cfg(test)]
mod tests_later_docs;
#[cfg(test)]
mod tests_later_meta;
