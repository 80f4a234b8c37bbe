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
/// XDELEX, XACKDEL and the stream reference options: Redis 8.2 only (Valkey has them
/// from 9.x, past its profiles here).
const R82: Since = Since::redis(82);
/// DELEX, DIGEST, SET's digest conditions and MSETEX: Redis 8.4 only.
const R84: Since = Since::redis(84);

/// The commands redlab implements that Redis 7.0 does not have, by full name.
pub const LATER: &[(&str, Since)] = &[
    ("client|setinfo", CLIENT_SETINFO_NO_TOUCH),
    ("client|no-touch", CLIENT_SETINFO_NO_TOUCH),
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
    ("xdelex", R82),
    ("xackdel", R82),
    ("delex", R84),
    ("digest", R84),
    ("msetex", R84),
    ("script|show", Since::both(Since::NEVER, 80)),
    ("cluster|slot-stats", CLUSTER_SLOT_STATS),
];

/// When the command `full` (`get`, `client|setinfo`) arrived: `LATER`'s entry, else always.
pub fn of(full: &str) -> Since {
    LATER
        .iter()
        .find(|(name, _)| *name == full)
        .map_or(Since::ALWAYS, |(_, s)| *s)
}

/// Commands whose arity changed after Redis 7.0, with the arity from the release that
/// changed it: ZRANK and ZREVRANK take WITHSCORE from Redis 7.2 (Valkey inherited it), so
/// from there they are -3 (`ZRANK k m WITHSCORE`), where 7.0's 3 makes a fourth word an
/// arity error. The command table keeps 7.0's arity; the dispatcher, `redis.call`, COMMAND
/// INFO and COMMAND GETKEYS ask `Command::arity_in`.
///
/// COMMAND GETKEYS and GETKEYSANDFLAGS are -3 from Redis 7.2 (7.0: -4), so a command name
/// alone reaches their own checks ("Invalid number of arguments specified for command", "The
/// command has no key arguments") instead of the arity error: valkey-server 8.1 answers so and
/// Redis 8.4's command table has -3 (command.txt `getkeys errors in order`).
pub const LATER_ARITY: &[(&str, i32, Since)] = &[
    ("zrank", -3, ZRANK_WITHSCORE),
    ("zrevrank", -3, ZRANK_WITHSCORE),
    ("command|getkeys", -3, R72),
    ("command|getkeysandflags", -3, R72),
];

/// Flags a later release took off a command, with that release. Redis 7.4 took `noscript` off
/// WAITAOF (`WAIT_BLOCKING`). Redis 8.0 took `denyoom` off
/// HEXPIRE, HPEXPIRE, HEXPIREAT and HPEXPIREAT (redis/redis#13800: like EXPIRE, they allocate
/// little), so Redis 7.4 refuses them over maxmemory and lists the flag in COMMAND INFO, and
/// 8.0 on does neither. The table (server/data/commands-later.json) keeps 7.4's flags;
/// `Command::denies_oom_in` and COMMAND INFO ask `flag_dropped`.
pub const FLAGS_DROPPED: &[(&str, &str, Since)] = &[
    ("waitaof", "noscript", WAIT_BLOCKING),
    ("hexpire", "denyoom", R80),
    ("hpexpire", "denyoom", R80),
    ("hexpireat", "denyoom", R80),
    ("hpexpireat", "denyoom", R80),
];

/// Flags a later release put on a command, with that release: Redis 7.4 made WAIT a
/// `blocking` command (redis/redis#12977, January 2024, after 7.2.4: Redis 7.2's table has
/// WAIT without flags; valkey-server 8.1, which took Redis's development branch of March
/// 2024, and Redis 8.4's table print it), and Redis 7.2 let CLUSTER SHARDS and CLUSTER SLOTS
/// run while the dataset loads (`loading`: Redis 7.2's table, valkey-server 8.1 and Redis
/// 8.4's all have it). The table keeps 7.0's flags; COMMAND INFO asks `flags_added` (and
/// prints each in Redis's order, `info_later::FLAG_ORDER`).
pub const FLAGS_ADDED: &[(&str, &str, Since)] = &[
    ("wait", "blocking", WAIT_BLOCKING),
    ("waitaof", "blocking", WAIT_BLOCKING),
    ("cluster|shards", "loading", R72),
    ("cluster|slots", "loading", R72),
];

/// The flags `profile`'s server adds to the command `full` (`FLAGS_ADDED`).
pub fn flags_added(
    profile: crate::compat::Profile,
    full: &str,
) -> impl Iterator<Item = &'static str> + '_ {
    FLAGS_ADDED
        .iter()
        .filter(move |&&(n, _, since)| n == full && profile.has(since))
        .map(|&(_, f, _)| f)
}

/// ACL categories a later release put a command in, with that release (without `@`): with
/// its `blocking` flag WAIT joined @blocking in Redis 7.4, as Redis gives every blocking
/// command that category (valkey-server 8.1's `ACL CAT blocking` lists it, Redis 7.2's table
/// gives WAIT @slow @connection only; no other command of Redis 7.0 changed category up to
/// Valkey 8.1, comparing `ACL CAT` of each category there with redis-server 7.0.15). `ACL
/// CAT`, the `+@cat` / `-@cat` rules and COMMAND INFO / COMMAND LIST FILTERBY ACLCAT ask
/// `categories_added`.
pub const CATEGORIES_ADDED: &[(&str, &str, Since)] = &[
    ("wait", "blocking", WAIT_BLOCKING),
    ("waitaof", "blocking", WAIT_BLOCKING),
];

/// WAIT and WAITAOF are `blocking` commands in @blocking, and WAITAOF loses `noscript`, so a
/// script runs it as WAIT (at once, as a non-blocking command) where 7.2 refuses it
/// (redis/redis#12977: Redis 7.4, and Valkey 8.0, which forked from Redis's development
/// branch after the change; Redis 7.2's table has WAITAOF `noscript` in @slow @connection).
pub const WAIT_BLOCKING: Since = Since::both(74, 80);

/// Commands a later release let scripts run, with that release (the table flags them
/// `noscript`, as the release that brought them did): `resolve::for_script` asks
/// `scriptable_later`.
pub const SCRIPTABLE_LATER: &[(&str, Since)] = &[("waitaof", WAIT_BLOCKING)];

/// Whether `profile`'s scripts may run `name` though its table entry says `noscript`
/// (`SCRIPTABLE_LATER`).
pub fn scriptable_later(profile: crate::compat::Profile, name: &str) -> bool {
    SCRIPTABLE_LATER
        .iter()
        .any(|&(n, since)| n == name && profile.has(since))
}

/// The categories (without `@`) `profile`'s server adds to the command `full`.
pub fn categories_added(
    profile: crate::compat::Profile,
    full: &str,
) -> impl Iterator<Item = &'static str> + '_ {
    CATEGORIES_ADDED
        .iter()
        .filter(move |&&(n, _, since)| n == full && profile.has(since))
        .map(|&(_, c, _)| c)
}

/// Whether `profile`'s server has taken `flag` off the command `full` (`FLAGS_DROPPED`).
pub fn flag_dropped(profile: crate::compat::Profile, full: &str, flag: &str) -> bool {
    FLAGS_DROPPED
        .iter()
        .any(|&(n, f, since)| n == full && f == flag && profile.has(since))
}

/// ZRANK / ZREVRANK ... WITHSCORE: Redis 7.2 and Valkey 7.2.
pub const ZRANK_WITHSCORE: Since = R72;

/// Redis 7.2's COMMAND DOCS: its rewritten summaries ("Sets the string value of a key,
/// ignoring its type. ..."), `display_text` on every argument, its corrected complexities
/// and 7.2 history lines. The Redis profiles from 7.2 on print Redis 7.2's table
/// (server/data/commands-docs-7.2.json, written by scripts/gen_docs_72.py from redis-doc's
/// table for 7.2), as later releases changed it (`meta::docs_in`). Valkey 7.2, Redis 7.2.4
/// renamed, kept that table; Valkey 8.1 prints its own (`VALKEY_COMMAND_TABLE`).
pub const DOCS_72: Since = R72;

/// Commands whose COMMAND DOCS entry a release after 7.2 rewrote (an argument or a history
/// line added), with that release, where the entry is written by hand in
/// server/data/commands-later.json from that release's published reference (BITOP 8.2,
/// XREADGROUP 8.4, CLIENT KILL 7.4, SET 8.4, XADD and XTRIM 8.2) or is the one
/// valkey-server 8.1 prints (server/data/commands-valkey-8.1.8.json), where Valkey kept it as
/// Redis wrote it: HSCAN's NOVALUES (7.4; Valkey ported it unchanged in 8.0). Either way the
/// entry is in the 7.2 shape. A Redis profile that has the release shows that entry, unless
/// the 7.2 table's file carries a more recent one for it (`meta::docs_in`); smaller changes
/// of later releases are entries of that file (`name@74`...), written by its script.
///
/// A command listed for several releases shows the entry of the latest one its profile has:
/// the hand-written `name@<level>` entry (`client|list@80`) when there is one, else `name`'s.
/// CLIENT LIST is hand-written from Redis 8.4's table: 7.4's history adds the
/// `lib-name`/`lib-ver` (7.2.0) and `watch` (7.4.0) lines, 8.0's the `io-thread` one. The 7.2.0
/// line is not in Redis 7.2's table (nor in valkey-server 8.1's entry), so Redis 7.2 did not
/// print it: it is taken to have come with 7.4's.
pub const LATER_DOCS: &[(&str, Since)] = &[
    ("client|list", Since::redis(74)),
    ("client|list", Since::redis(80)),
    ("hscan", HSCAN_NOVALUES),
    ("client|kill", CLIENT_KILL_MAXAGE),
    ("bitop", BITOP_82),
    ("xadd", STREAM_REF_OPTIONS),
    ("xtrim", STREAM_REF_OPTIONS),
    ("xreadgroup", XREADGROUP_CLAIM),
    ("set", SET_DIGEST_CONDITIONS),
];

/// The latest release `profile` has whose COMMAND DOCS entry of `full` differs from 7.0's
/// (`LATER_DOCS`), or None.
pub fn later_docs(profile: crate::compat::Profile, full: &str) -> Option<Since> {
    LATER_DOCS
        .iter()
        .filter(|&&(name, since)| name == full && profile.has(since))
        .map(|&(_, since)| since)
        .max_by_key(|since| (since.redis, since.valkey))
}

/// The later arity of the command `full`, with the release that brought it (`LATER_ARITY`).
pub fn later_arity(full: &str) -> Option<(Since, i32)> {
    LATER_ARITY
        .iter()
        .find(|(name, _, _)| *name == full)
        .map(|&(_, arity, since)| (since, arity))
}

/// CLIENT SETINFO and CLIENT NO-TOUCH (Redis 7.2), also listed by CLIENT HELP from there.
pub const CLIENT_SETINFO_NO_TOUCH: Since = R72;
/// CLIENT KILL ... MAXAGE (Redis 7.4, Valkey 8.0), listed by CLIENT HELP from there with the
/// ID filter. Valkey 8's CLIENT KILL/LIST filters are `cmd::connection::client_filter`.
pub const CLIENT_KILL_MAXAGE: Since = Since::both(74, 80);

/// BITOP DIFF, DIFF1, ANDOR and ONE: Redis 8.2 only (written from Redis 8.2's bitops.c and
/// command reference; no 8.2 server here).
pub const BITOP_82: Since = Since::redis(82);

/// XADD and XTRIM ... KEEPREF | DELREF | ACKED: how trimming treats the consumer groups'
/// references (Redis 8.2, with XDELEX and XACKDEL; written from the 8.2 command reference
/// and Redis's own tests of it, no 8.2 server here).
pub const STREAM_REF_OPTIONS: Since = R82;

/// CLUSTER SLOT-STATS and cluster-slot-stats-enabled: Valkey 8.0, and Redis 8.2 (ported
/// from Valkey).
pub const CLUSTER_SLOT_STATS: Since = Since::both(82, 80);

/// XREADGROUP ... CLAIM min-idle-time: Redis 8.4 only (written from the 8.4 command
/// reference, `cmd::stream::read_claim`; no 8.4 server here).
pub const XREADGROUP_CLAIM: Since = R84;
/// SET ... IFEQ value: Redis 8.4, and Valkey 8.1 (which defines only IFEQ).
pub const SET_IFEQ: Since = Since::both(84, 81);
/// SET ... IFNE / IFDEQ / IFDNE: Redis 8.4 only.
pub const SET_DIGEST_CONDITIONS: Since = R84;
/// HSCAN ... NOVALUES: Redis 7.4, Valkey 8.0.
pub const HSCAN_NOVALUES: Since = Since::both(74, 80);
/// XREAD's `+` ID, the stream's last entry (Redis 7.4; valkey-server 8.1 has it, Valkey 7.2
/// has not: whether Valkey 8.0 has it does not matter to the profiles).
pub const XREAD_LAST_ENTRY: Since = Since::both(74, 81);
/// BGSAVE CANCEL: Valkey 8.1 only (in its COMMAND DOCS; Redis's reference has none up to 8.4).
pub const BGSAVE_CANCEL: Since = Since::both(Since::NEVER, 81);
/// ZSCAN ... NOSCORES: Valkey 8.0 only (Redis's reference has no such option up to 8.4).
pub const ZSCAN_NOSCORES: Since = Since::both(Since::NEVER, 80);
/// Listpack sets, with set-max-listpack-entries and -value: Redis 7.2 and Valkey 7.2.
pub const SET_LISTPACK: Since = R72;
/// Clients read into one buffer shared between them and hold one of their own only for
/// what a read left incomplete (Redis 8.0's reusable query buffer, from Valkey 8.0):
/// CLIENT LIST shows an idle client with qbuf-free=0.
pub const REUSABLE_QUERY_BUFFER: Since = Since::both(80, 80);

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

/// Redis 7.2's consumer groups (Valkey inherited them, as valkey-server 8.1 shows in
/// stream_groups.txt): XREADGROUP creates its consumer for every stream it names even when
/// nothing is served, and XCLAIM/XAUTOCLAIM create theirs even when nothing is claimed; a
/// blocked XREADGROUP woken by a change to its key is run again as a fresh call (so a deleted
/// key or group is "NOGROUP No such key ...", another type is WRONGTYPE, and a wake-up with
/// no entry to deliver keeps it blocked). Redis 7.0 creates consumers only when serving or
/// claiming, and answers a woken client "UNBLOCKED the stream key no longer exists" or "the
/// consumer group this client was blocked on no longer exists".
pub const STREAM_GROUPS_72: Since = R72;

/// Redis 7.2's consumer active time (Valkey inherited it): XINFO CONSUMERS adds `inactive`
/// (ms since an entry was last delivered to or claimed by the consumer, -1 if never) after
/// `idle`, and XINFO STREAM FULL adds `active-time` after `seen-time`.
pub const CONSUMER_ACTIVE_TIME: Since = R72;

/// The permission errors of Redis 7.2 (`getAclErrorMessage`, which Valkey inherited): a
/// refused command names the user ("NOPERM User u has no permissions to run the 'del'
/// command"), a refused key or channel says "No permissions to access a key" (ACL DRYRUN
/// names the user and the key), a script's refusal is "ACL failure in script: <that>", and
/// EXEC's reason is the same text. Redis 7.0 words them "this user has no permissions ...",
/// "The user executing the script can't ...". Checked against valkey-server 8.1 (acl.txt);
/// the Redis side follows from Valkey 8.1 having kept Redis 7.2.4's texts, as 7.0.15 does not.
pub const ACL_ERROR_MESSAGES: Since = R72;
/// ACL LOG entries carry `entry-id`, `timestamp-created` and `timestamp-last-updated`
/// (Redis 7.2; valkey-server 8.1 shows them: ids from 0 in order of first logging, kept by a
/// grouped repeat and by ACL LOG RESET's counter).
pub const ACL_LOG_ENTRY_IDS: Since = R72;
/// A blocked command that times out is logged in SLOWLOG, and one ended by CLIENT UNBLOCK is
/// logged with its arguments: Redis 7.0.15 leaves the first out and logs the second with no
/// arguments; valkey-server 8.1 logs both as sent (Redis 7.2's rework of blocking, which
/// re-runs the command to answer it). Served commands are logged as sent by both.
pub const UNBLOCKED_LOGGED_AS_SENT: Since = R72;
/// ACL GETUSER, ACL LIST and the ACL file print a selector's command rules as they were
/// given (Redis 7.2's `command_rules`, which Valkey kept): `-@all +get -@hash`, where Redis
/// 7.0 works them out from the permissions (`-@all +get`). Checked against valkey-server 8.1
/// (acl.txt).
pub const ACL_RULES_AS_GIVEN: Since = R72;
/// ACL LIST and GETUSER show `sanitize-payload` for every user that was not given
/// `skip-sanitize-payload` (valkey-server 8.1 creates users with the flag); Redis 7.0 shows
/// it only after `sanitize-payload` or `reset`.
pub const ACL_SANITIZE_SHOWN: Since = Since::both(Since::NEVER, 80);

/// COMMAND INFO and COMMAND DOCS describe commands as valkey-server 8.1 does (its own
/// summaries, tips, key-spec flags and ACL categories, from server/data/commands-valkey-8.1.8.json).
pub const VALKEY_COMMAND_TABLE: Since = Since::both(Since::NEVER, 81);

/// Valkey 8.0's scripting API: the `server` table beside `redis` (also while FUNCTION LOAD
/// runs a library), `__server__err__handler`, `redis.SERVER_NAME`, `VALKEY_VERSION` and
/// `VALKEY_VERSION_NUM`, an `os` table with `clock`, and the API's errors in Valkey's words
/// (`lua::texts`). Valkey 7.2 is Redis 7.2.4 renamed and has none of it.
pub const VALKEY_SERVER_API: Since = Since::both(Since::NEVER, 80);
/// Valkey 8.1's scripting engines: EVAL reads the shebang's options first, then looks its
/// engine up by name, case-insensitively ("Could not find scripting engine 'x'"); Redis
/// (and Valkey 7.2) refuse anything but `#!lua` first ("Unexpected engine in script
/// shebang").
pub const VALKEY_SCRIPT_ENGINES: Since = Since::both(Since::NEVER, 81);

/// The server's name in the -BUSY text: valkey-server 8.1 answers "Valkey is busy running a
/// script"; Redis, and Valkey before 8.0 (taken to keep Redis's words, as its 7.2 releases
/// kept Redis's other texts), say "Redis".
pub fn busy_title(profile: crate::compat::Profile) -> &'static str {
    if profile.family() == crate::compat::Family::Valkey && profile.level() >= 80 {
        "Valkey"
    } else {
        "Redis"
    }
}
