//! When a command or option arrived, per family: the "since" column of the command table.
//!
//! Every command Redis 7.0.15 has exists in every profile (Valkey forked from 7.2.4, which
//! has them all). `LATER` lists the commands redlab implements that arrived after 7.0, with
//! the release of each family that brought them; `table::build` copies the entry into the
//! command's `since`. Options newer than 7.0 are checked by their handlers against the
//! constants below.

/// The first version (major*10 + minor, see `Profile::level`) of each family that has a
/// command or option; `NEVER` for a family that has not got it in any profile redlab knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Since {
    pub redis: u16,
    pub valkey: u16,
}

impl Since {
    /// A family that never got it (as far as redlab's profiles go).
    pub const NEVER: u16 = u16::MAX;

    /// In every profile: the commands of Redis 7.0.
    pub const ALWAYS: Since = Since {
        redis: 0,
        valkey: 0,
    };

    /// In Redis from `redis` on, and in no Valkey profile.
    pub const fn redis(redis: u16) -> Since {
        Since {
            redis,
            valkey: Since::NEVER,
        }
    }

    /// In Redis from `redis` on and in Valkey from `valkey` on.
    pub const fn both(redis: u16, valkey: u16) -> Since {
        Since { redis, valkey }
    }

    /// "Redis 7.4" / "Redis 8.4, Valkey 8.1", for reports and docs.
    pub fn describe(self) -> String {
        let v = |l: u16| format!("{}.{}", l / 10, l % 10);
        match (self.redis, self.valkey) {
            (0, 0) => "every profile".to_string(),
            (r, Since::NEVER) => format!("Redis {}", v(r)),
            (Since::NEVER, k) => format!("Valkey {}", v(k)),
            (r, k) => format!("Redis {}, Valkey {}", v(r), v(k)),
        }
    }
}

/// Redis 7.2 (and Valkey 7.2, forked from it).
const R72: Since = Since::both(72, 72);
/// Hash field expiration: Redis 7.4; Valkey has it from 9.0, past its profiles here.
const R74: Since = Since::redis(74);
/// HGETDEL, HGETEX, HSETEX: Redis 8.0 only.
const R80: Since = Since::redis(80);
/// DELEX, DIGEST and SET's digest conditions: Redis 8.4 only.
const R84: Since = Since::redis(84);

/// The commands redlab implements that Redis 7.0 does not have, by full name.
pub const LATER: &[(&str, Since)] = &[
    ("client|setinfo", R72),
    ("client|no-touch", R72),
    ("waitaof", R72),
    ("hexpire", R74),
    ("hpexpire", R74),
    ("hexpireat", R74),
    ("hpexpireat", R74),
    ("httl", R74),
    ("hpttl", R74),
    ("hexpiretime", R74),
    ("hpexpiretime", R74),
    ("hpersist", R74),
    ("hgetdel", R80),
    ("hgetex", R80),
    ("hsetex", R80),
    ("delex", R84),
    ("digest", R84),
];

/// When the command `full` (`get`, `client|setinfo`) arrived: `LATER`'s entry, else always.
pub fn of(full: &str) -> Since {
    LATER
        .iter()
        .find(|(name, _)| *name == full)
        .map_or(Since::ALWAYS, |(_, s)| *s)
}

/// SET ... IFEQ value: Redis 8.4, and Valkey 8.1 (which defines only IFEQ).
pub const SET_IFEQ: Since = Since::both(84, 81);
/// SET ... IFNE / IFDEQ / IFDNE: Redis 8.4 only.
pub const SET_DIGEST_CONDITIONS: Since = R84;
/// HSCAN ... NOVALUES: Redis 7.4, Valkey 8.0.
pub const HSCAN_NOVALUES: Since = Since::both(74, 80);
/// Listpack sets, with set-max-listpack-entries and -value: Redis 7.2 and Valkey 7.2.
pub const SET_LISTPACK: Since = R72;

/// A timeout whose deadline overflows is "timeout is out of range" (redis/redis#11338,
/// Redis 7.2; Valkey inherited it). Redis 7.0 lets the deadline wrap.
pub const TIMEOUT_OVERFLOW_REFUSED: Since = R72;
/// Blocking commands run in scripts, as non-blocking ones (redis/redis#11568, Redis 7.2;
/// Valkey inherited it): these lost their `noscript` flag and XREAD takes BLOCK in a script.
/// Redis 7.0 refuses them ("This Redis command is not allowed from script").
pub const BLOCKING_IN_SCRIPTS: Since = R72;

/// The commands `BLOCKING_IN_SCRIPTS` lets scripts run (valkey-server 8.1's COMMAND INFO).
pub const SCRIPTABLE_BLOCKING: &[&str] = &[
    "blpop",
    "brpop",
    "brpoplpush",
    "blmove",
    "bzpopmin",
    "bzpopmax",
    "wait",
];

/// TIME stands still inside a script or transaction (redis/redis#10300, Redis 7.2; Valkey
/// inherited it). Redis 7.0's TIME reads the clock each time.
pub const TIME_FROZEN_IN_SCRIPTS: Since = R72;
