//! CLIENT and its subcommands: ID, INFO, LIST, KILL, SETNAME, GETNAME, NO-EVICT, REPLY,
//! UNBLOCK, TRACKING, CACHING, GETREDIR, TRACKINGINFO, HELP.
//!
//! CLIENT LIST prints Redis 7.0's fields in Redis's order. What redlab cannot know (file
//! descriptors, buffer sizes) gets plausible values of the same shape, so parsers written
//! against Redis keep working.

use std::fmt::Write as _;

use super::super::args;
use bytes::Bytes;

use super::super::table::{flags::*, CmdResult, Command};
use super::client_filter::{matching, Filter};
use super::memory::{self, shared_query_buffer};
use crate::compat::{Family, Profile, Since};
use crate::engine::pause::PauseKind;
use crate::engine::tracking::TrackingOptions;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::numfmt;
use crate::reply::Reply;
use crate::session::{ConnId, NetMeters, ReplyMode, Session};

/// Client types as CLIENT LIST TYPE and CLIENT KILL TYPE name them.
#[derive(Clone, Copy, PartialEq)]
pub(super) enum ClientType {
    Normal,
    Replica,
    PubSub,
    Master,
}

pub(super) fn client_type_by_name(name: &[u8]) -> Option<ClientType> {
    match args::lower(name).as_str() {
        "normal" => Some(ClientType::Normal),
        "slave" | "replica" => Some(ClientType::Replica),
        "pubsub" => Some(ClientType::PubSub),
        "master" => Some(ClientType::Master),
        _ => None,
    }
}

/// A replica's connection, a subscriber, or a normal client (MONITOR included, as Redis
/// counts it).
pub(super) fn client_type(s: &Session) -> ClientType {
    if s.replica {
        ClientType::Replica
    } else if s.in_pubsub() {
        ClientType::PubSub
    } else {
        ClientType::Normal
    }
}

fn flags_of(s: &Session) -> String {
    let mut f = String::new();
    if s.monitor {
        f.push('O');
    } else if s.replica {
        f.push('S');
    }
    if s.in_pubsub() {
        f.push('P');
    }
    if s.multi.is_some() {
        f.push('x');
    }
    if s.blocked.is_some() {
        f.push('b');
    }
    if s.tracking.on {
        f.push('t');
    }
    if s.tracking.broken_redirect {
        f.push('R');
    }
    if s.tracking.bcast {
        f.push('B');
    }
    if s.watch_dirty {
        f.push('d');
    }
    if s.close_requested {
        f.push('c');
    }
    if is_unix_socket(s) {
        f.push('U');
    }
    if s.no_evict {
        f.push('e');
    }
    if f.is_empty() {
        f.push('N');
    }
    f
}

/// A client of the `unixsocket`: the shell names both ends `<path>:0`, as Redis does.
fn is_unix_socket(s: &Session) -> bool {
    s.addr == s.laddr && s.addr.ends_with(":0") && s.addr.parse::<std::net::SocketAddr>().is_err()
}

/// The CLIENT LIST fields later versions added to Redis 7.0's line, by profile.
struct LineFields {
    /// `capa=` after flags: Valkey 8.0 (CLIENT CAPA).
    capa: bool,
    /// `watch=` after multi: Redis 7.4, Valkey 8.0.
    watch: bool,
    /// `lib-name= lib-ver=` after resp: Redis 7.2 (CLIENT SETINFO), every Valkey.
    lib: bool,
    /// `io-thread=` last: Redis 8.0.
    io_thread: bool,
    /// `tot-net-in= tot-net-out= tot-cmds=` last: Valkey 8.0.
    totals: bool,
}

impl LineFields {
    fn of(profile: Profile) -> LineFields {
        let valkey8 = profile.family() == Family::Valkey && profile.level() >= 80;
        let redis = |level| profile.family() == Family::Redis && profile.level() >= level;
        LineFields {
            capa: valkey8,
            watch: valkey8 || redis(74),
            lib: profile.has(Since::both(72, 72)),
            io_thread: redis(80),
            totals: valkey8,
        }
    }
}

/// One CLIENT LIST line (without the trailing newline). `current` holds the arguments of
/// the command being run when `s` is the caller, for its memory fields.
pub(super) fn info_line(
    s: &Session,
    now_ms: i64,
    current: Option<&Call>,
    profile: Profile,
) -> String {
    let mut line = String::with_capacity(300);
    let name = s
        .name
        .as_deref()
        .map(String::from_utf8_lossy)
        .unwrap_or_default();
    let fields = LineFields::of(profile);
    let multi = match &s.multi {
        Some(m) => m.queue.len() as i64,
        None if fields.capa && s.had_multi_state => 0,
        None => -1,
    };
    let multi_mem = memory::multi_mem(s);
    let shared_buffer = shared_query_buffer(profile);
    let (qbuf, qbuf_free, argv_mem, argv_total, query_mem) = match current {
        // The caller, in the middle of its command: the command is still in the buffer,
        // which reading it made room for (Redis 8's shared buffer is lent to it instead).
        Some(call) => {
            let (qbuf, room) = if shared_buffer {
                (0, 0)
            } else {
                let qbuf = memory::request_size(&call.args);
                (qbuf, (s.net.query.alloc_while_running() as usize).max(qbuf))
            };
            (
                qbuf,
                room - qbuf,
                call.args.iter().map(|a| a.len()).sum::<usize>(),
                memory::argv_memory(&call.args),
                memory::query_buffer_memory(s, shared_buffer, Some(room)),
            )
        }
        None => {
            let (qbuf, free) = memory::query_buffer(s, shared_buffer);
            let query_mem = memory::query_buffer_memory(s, shared_buffer, None);
            (qbuf, free, 0, 0, query_mem)
        }
    };
    // Redis keeps the first output in the client's reply buffer (obl bytes of rbs) and the
    // rest in a list of 16 KiB blocks (oll); omem counts the list only.
    let rbs = s.reply_buf.size;
    let crate::client_reply::Output {
        in_buffer: obl,
        blocks: oll,
        memory: omem,
    } = crate::client_reply::output(s);
    let capa = if fields.capa { " capa=" } else { "" };
    let watch = if fields.watch {
        format!(" watch={}", s.watched.len())
    } else {
        String::new()
    };
    let _ = write!(
        line,
        "id={} addr={} laddr={} fd={} name={} age={} idle={} flags={}{} db={} sub={} psub={} ssub={} multi={}{} \
         qbuf={} qbuf-free={} argv-mem={} multi-mem={} rbs={} rbp={} obl={} oll={} omem={} tot-mem={} events=r \
         cmd={} user={} redir={} resp={}",
        s.id,
        s.addr,
        s.laddr,
        s.id + 7,
        name,
        (now_ms - s.created_ms).max(0) / 1000,
        (now_ms - s.last_interaction_ms).max(0) / 1000,
        flags_of(s),
        capa,
        s.db,
        s.channels.len(),
        s.patterns.len(),
        s.shard_channels.len(),
        multi,
        watch,
        qbuf,
        qbuf_free,
        argv_mem,
        multi_mem,
        rbs,
        s.reply_buf.peak(&s.net),
        obl,
        oll,
        omem,
        (memory::fixed(s) + query_mem + argv_total + multi_mem + memory::bookkeeping(s)) as u64
            + omem,
        s.last_command,
        s.user,
        if s.tracking.on {
            s.tracking.redirect as i64
        } else {
            -1
        },
        s.resp,
    );
    if fields.lib {
        let text = |v: &Option<Vec<u8>>| {
            v.as_deref()
                .map(String::from_utf8_lossy)
                .unwrap_or_default()
                .into_owned()
        };
        let _ = write!(
            line,
            " lib-name={} lib-ver={}",
            text(&s.lib_name),
            text(&s.lib_ver)
        );
    }
    if fields.io_thread {
        // redlab serves every client on one thread: Redis 8's main thread is 0.
        line.push_str(" io-thread=0");
    }
    if fields.totals {
        let _ = write!(
            line,
            " tot-net-in={} tot-net-out={} tot-cmds={}",
            NetMeters::get(&s.net.bytes_in),
            NetMeters::get(&s.net.bytes_out),
            s.commands_run
        );
    }
    line
}

/// CLIENT LIST / CLIENT INFO text: a bulk string in RESP2, a `txt` verbatim string in RESP3.
fn text_reply(text: String) -> Reply {
    Reply::Verbatim("txt", text.into())
}

fn id(_: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(Reply::Int(call.conn as i64))
}

fn info(e: &mut Engine, call: &mut Call) -> CmdResult {
    let now = e.now_ms;
    let Some(s) = e.sessions.get(&call.conn) else {
        return Ok(Reply::Nil);
    };
    let mut text = info_line(s, now, Some(call), e.profile());
    text.push('\n');
    Ok(text_reply(text))
}

/// Whether the profile reads CLIENT LIST / KILL filters as Valkey 8 does (`client_filter`).
fn valkey_filters(e: &Engine) -> bool {
    e.profile().family() == crate::compat::Family::Valkey && e.profile().level() >= 80
}

fn list(e: &mut Engine, call: &mut Call) -> CmdResult {
    if valkey_filters(e) && call.argc() != 2 {
        if call.argc() == 3 {
            return Err(Reply::err(errors::SYNTAX));
        }
        let filter = Filter::parse(e, call)?;
        let skipme = filter.skipme.unwrap_or(false);
        let (now, profile) = (e.now_ms, e.profile());
        let mut text = String::new();
        for id in matching(e, call, &filter, skipme) {
            if let Some(s) = e.sessions.get(&id) {
                let current = (id == call.conn).then_some(&*call);
                text.push_str(&info_line(s, now, current, profile));
                text.push('\n');
            }
        }
        return Ok(text_reply(text));
    }
    let mut filter_type = None;
    let mut ids: Option<Vec<ConnId>> = None;
    if call.argc() == 4 && args::is(call.arg(2), "TYPE") {
        match client_type_by_name(call.arg(3)) {
            Some(t) => filter_type = Some(t),
            None => return Err(Reply::err(errors::unknown_client_type(call.arg(3)))),
        }
    } else if call.argc() > 3 && args::is(call.arg(2), "ID") {
        let valkey = e.profile().family() == crate::compat::Family::Valkey;
        let mut wanted = Vec::with_capacity(call.argc() - 3);
        for a in &call.args[3..] {
            wanted.push(if valkey {
                valkey_client_id(a)?
            } else {
                numfmt::parse_i64(a).ok_or(Reply::err(errors::INVALID_CLIENT_ID))?
            });
        }
        // Listed in the order asked, once per mention, as Redis does.
        ids = Some(
            wanted
                .into_iter()
                .filter(|&n| n > 0)
                .map(|n| n as ConnId)
                .collect(),
        );
    } else if call.argc() != 2 {
        return Err(Reply::err(errors::SYNTAX));
    }
    let now = e.now_ms;
    let profile = e.profile();
    let order: Vec<ConnId> = match ids {
        Some(ids) => ids,
        None => {
            let mut all: Vec<ConnId> = e.sessions.keys().copied().collect();
            all.sort_unstable();
            all
        }
    };
    let mut text = String::new();
    for id in order {
        let Some(s) = e.sessions.get(&id) else {
            continue;
        };
        if filter_type.is_some_and(|t| client_type(s) != t) {
            continue;
        }
        let current = (id == call.conn).then_some(&*call);
        text.push_str(&info_line(s, now, current, profile));
        text.push('\n');
    }
    Ok(text_reply(text))
}

/// A client ID in Valkey 8's CLIENT LIST and KILL filters: not a number is a syntax error,
/// and it must be positive (Redis 7.0 has a text of its own for each command).
fn valkey_client_id(arg: &[u8]) -> Result<i64, Reply> {
    match numfmt::parse_i64(arg) {
        None => Err(Reply::err(errors::SYNTAX)),
        Some(n) if n < 1 => Err(Reply::err(errors::CLIENT_ID_POSITIVE)),
        Some(n) => Ok(n),
    }
}

/// CLIENT KILL, both forms: `KILL addr` (may kill the caller; +OK or an error) and
/// `KILL <filter> <value> ...` (skips the caller unless SKIPME no; answers the count).
fn kill(e: &mut Engine, call: &mut Call) -> CmdResult {
    let mut addr: Option<&[u8]> = None;
    let mut laddr: Option<&[u8]> = None;
    let mut ctype = None;
    let mut id: Option<ConnId> = None;
    let mut user: Option<String> = None;
    let mut skipme = true;
    let mut maxage: Option<i64> = None;
    let old_form = call.argc() == 3;
    if !old_form && valkey_filters(e) {
        let filter = Filter::parse(e, call)?;
        let skipme = filter.skipme.unwrap_or(true);
        let victims = matching(e, call, &filter, skipme);
        let killed = victims.len();
        for v in victims {
            kill_connection(e, call.conn, v);
        }
        return Ok(Reply::Int(killed as i64));
    }
    if old_form {
        addr = Some(call.arg(2));
        skipme = false;
    } else {
        let mut i = 2;
        while i < call.argc() {
            let more = i + 1 < call.argc();
            let opt = call.arg(i);
            if !more {
                return Err(Reply::err(errors::SYNTAX));
            }
            let val = call.arg(i + 1);
            if args::is(opt, "ID") {
                id = Some(if e.profile().family() == crate::compat::Family::Valkey {
                    valkey_client_id(val)?
                } else {
                    match numfmt::parse_i64(val) {
                        Some(n) if n >= 1 => n,
                        _ => return Err(Reply::err(errors::CLIENT_ID_POSITIVE)),
                    }
                } as ConnId);
            } else if args::is(opt, "TYPE") {
                match client_type_by_name(val) {
                    Some(t) => ctype = Some(t),
                    None => return Err(Reply::err(errors::unknown_client_type(val))),
                }
            } else if args::is(opt, "ADDR") {
                addr = Some(val);
            } else if args::is(opt, "LADDR") {
                laddr = Some(val);
            } else if args::is(opt, "USER") {
                let name = String::from_utf8_lossy(val).into_owned();
                if e.acl.user(&name).is_none() {
                    return Err(Reply::err(errors::no_such_user(val)));
                }
                user = Some(name);
            } else if args::is(opt, "SKIPME") {
                if args::is(val, "yes") {
                    skipme = true;
                } else if args::is(val, "no") {
                    skipme = false;
                } else {
                    return Err(Reply::err(errors::SYNTAX));
                }
            } else if args::is(opt, "MAXAGE")
                && e.has_option(
                    crate::compat::since::CLIENT_KILL_MAXAGE,
                    "client kill MAXAGE",
                )
            {
                // Redis 7.4: connections at least this many seconds old.
                let age =
                    numfmt::parse_i64(val).ok_or_else(|| Reply::err(errors::MAXAGE_NOT_INTEGER))?;
                if age <= 0 {
                    return Err(Reply::err(errors::MAXAGE_POSITIVE));
                }
                maxage = Some(age);
            } else {
                return Err(Reply::err(errors::SYNTAX));
            }
            i += 2;
        }
    }
    let mut victims: Vec<ConnId> = e
        .sessions
        .values()
        .filter(|s| addr.is_none_or(|a| s.addr.as_bytes() == a))
        .filter(|s| laddr.is_none_or(|a| s.laddr.as_bytes() == a))
        .filter(|s| ctype.is_none_or(|t| client_type(s) == t))
        .filter(|s| id.is_none_or(|i| s.id == i))
        .filter(|s| user.as_ref().is_none_or(|u| s.user == *u))
        .filter(|s| maxage.is_none_or(|age| (e.now_ms - s.created_ms).max(0) / 1000 >= age))
        .filter(|s| !(skipme && s.id == call.conn))
        .map(|s| s.id)
        .collect();
    victims.sort_unstable();
    let killed = victims.len();
    for v in victims {
        kill_connection(e, call.conn, v);
    }
    if old_form {
        if killed == 0 {
            Err(Reply::err(errors::NO_SUCH_CLIENT))
        } else {
            Ok(Reply::ok())
        }
    } else {
        Ok(Reply::Int(killed as i64))
    }
}

/// Closes `victim`. Another connection goes at once (its subscriptions, watches and blocked
/// command with it) and the shell is woken to drop the socket; the caller itself is closed
/// only after its reply is written.
pub(crate) fn kill_connection(e: &mut Engine, caller: ConnId, victim: ConnId) {
    if victim == caller {
        if let Some(s) = e.sessions.get_mut(&caller) {
            s.close_requested = true;
        }
        return;
    }
    e.disconnect(victim);
    e.wakeups.push(victim);
}

fn setname(e: &mut Engine, call: &mut Call) -> CmdResult {
    if !super::valid_client_name(call.arg(2)) {
        return Err(Reply::err(errors::CLIENT_NAME_CHARS));
    }
    let name = call.args[2].clone();
    super::set_client_name(e, call.conn, &name);
    Ok(Reply::ok())
}

fn getname(e: &mut Engine, call: &mut Call) -> CmdResult {
    Ok(Reply::opt_bulk(
        e.sessions.get(&call.conn).and_then(|s| s.name.as_deref()),
    ))
}

/// Parses the ON|OFF argument of CLIENT NO-EVICT and NO-TOUCH.
fn on_off(arg: &[u8]) -> Result<bool, Reply> {
    if args::is(arg, "on") {
        Ok(true)
    } else if args::is(arg, "off") {
        Ok(false)
    } else {
        Err(Reply::err(errors::SYNTAX))
    }
}

fn no_evict(e: &mut Engine, call: &mut Call) -> CmdResult {
    let on = on_off(call.arg(2))?;
    if let Some(s) = e.sessions.get_mut(&call.conn) {
        s.no_evict = on;
    }
    Ok(Reply::ok())
}

/// CLIENT NO-TOUCH (Redis 7.2, accepted here on purpose: see DIFFERENCES.md): commands of
/// this client leave keys' access times alone.
fn no_touch(e: &mut Engine, call: &mut Call) -> CmdResult {
    let on = on_off(call.arg(2))?;
    if let Some(s) = e.sessions.get_mut(&call.conn) {
        s.no_touch = on;
    }
    e.any_no_touch |= on;
    Ok(Reply::ok())
}

/// CLIENT SETINFO LIB-NAME|LIB-VER (Redis 7.2, Valkey 7.2): shown in CLIENT LIST / INFO's
/// lib-name and lib-ver fields under those profiles (`LineFields`).
fn setinfo(e: &mut Engine, call: &mut Call) -> CmdResult {
    let attr = args::lower(call.arg(2));
    let value = call.arg(3);
    if !matches!(attr.as_str(), "lib-name" | "lib-ver") {
        return Err(Reply::err(errors::setinfo_option(call.arg(2))));
    }
    if value.iter().any(|c| !(b'!'..=b'~').contains(c)) {
        return Err(Reply::err(errors::setinfo_value(&attr)));
    }
    let v = (!value.is_empty()).then(|| value.to_vec());
    if let Some(s) = e.sessions.get_mut(&call.conn) {
        if attr == "lib-name" {
            s.lib_name = v;
        } else {
            s.lib_ver = v;
        }
    }
    Ok(Reply::ok())
}

/// CLIENT REPLY: the engine applies the mode after the command, so OFF and SKIP swallow
/// their own +OK, as in Redis.
fn reply(e: &mut Engine, call: &mut Call) -> CmdResult {
    let mode = if args::is(call.arg(2), "on") {
        ReplyMode::On
    } else if args::is(call.arg(2), "off") {
        ReplyMode::Off
    } else if args::is(call.arg(2), "skip") {
        ReplyMode::Skip
    } else {
        return Err(Reply::err(errors::SYNTAX));
    };
    e.any_reply_mode |= mode != ReplyMode::On;
    if let Some(s) = e.sessions.get_mut(&call.conn) {
        // SKIP while OFF stays OFF, as Redis ignores SKIP for a client with replies off.
        if !(mode == ReplyMode::Skip && s.reply_mode == ReplyMode::Off) {
            s.reply_mode = mode;
        }
    }
    Ok(Reply::ok())
}

fn unblock(e: &mut Engine, call: &mut Call) -> CmdResult {
    // Valkey 8 reads the reason only when it is the last argument, and ignores the rest of a
    // longer line (`CLIENT UNBLOCK 1 2 3` answers 0).
    let valkey = e.profile().family() == crate::compat::Family::Valkey;
    if call.argc() > 4 && !valkey {
        return Err(Reply::err(errors::subcommand_syntax(
            &call.args[0],
            &call.args[1],
        )));
    }
    let mut error = false;
    if call.argc() == 4 {
        if args::is(call.arg(3), "timeout") {
            error = false;
        } else if args::is(call.arg(3), "error") {
            error = true;
        } else {
            return Err(Reply::err(errors::UNBLOCK_REASON));
        }
    }
    let target = numfmt::parse_i64(call.arg(2)).ok_or(Reply::err(errors::NOT_INTEGER))?;
    if target <= 0 {
        return Ok(Reply::Int(0));
    }
    Ok(Reply::Int(e.unblock_with(target as ConnId, error) as i64))
}

/// CLIENT PAUSE timeout [WRITE|ALL]: see `engine/pause.rs`.
/// CLIENT PAUSE timeout [WRITE|ALL]. Valkey 8 reads the mode only from a line of exactly
/// four words, so a longer one pauses ALL (Redis 7.0: a syntax error).
fn pause(e: &mut Engine, call: &mut Call) -> CmdResult {
    if call.argc() > 4 && !valkey_filters(e) {
        return Err(Reply::err(errors::subcommand_syntax(
            &call.args[0],
            &call.args[1],
        )));
    }
    let timeout =
        numfmt::parse_i64(call.arg(2)).ok_or(Reply::err(errors::PAUSE_TIMEOUT_NOT_INTEGER))?;
    if timeout < 0 {
        return Err(Reply::err(errors::TIMEOUT_NEGATIVE));
    }
    let kind = if call.argc() == 4 {
        if args::is(call.arg(3), "write") {
            PauseKind::Write
        } else if args::is(call.arg(3), "all") {
            PauseKind::All
        } else {
            return Err(Reply::err(errors::PAUSE_MODE));
        }
    } else {
        PauseKind::All
    };
    e.pause_clients(timeout, kind);
    Ok(Reply::ok())
}

fn unpause(e: &mut Engine, _: &mut Call) -> CmdResult {
    e.unpause_clients();
    Ok(Reply::ok())
}

/// CLIENT TRACKING ON|OFF [REDIRECT id] [BCAST] [PREFIX p ...] [OPTIN] [OPTOUT] [NOLOOP]:
/// the options are read first (their errors come first, in argument order), then checked
/// against each other and the client's current mode, in Redis's order.
fn tracking(e: &mut Engine, call: &mut Call) -> CmdResult {
    let mut redirect: ConnId = 0;
    let mut opts = TrackingOptions::default();
    let mut prefixes: Vec<Bytes> = Vec::new();
    let mut j = 3;
    while j < call.argc() {
        let more = j + 1 < call.argc();
        let opt = call.arg(j);
        if args::is(opt, "redirect") && more {
            j += 1;
            if redirect != 0 {
                return Err(Reply::err(errors::TRACKING_ONE_REDIRECT));
            }
            let id = numfmt::parse_i64(call.arg(j)).ok_or(Reply::err(errors::NOT_INTEGER))?;
            if id <= 0 || !e.sessions.contains_key(&(id as ConnId)) {
                return Err(Reply::err(errors::TRACKING_NO_REDIRECT_TARGET));
            }
            redirect = id as ConnId;
        } else if args::is(opt, "bcast") {
            opts.bcast = true;
        } else if args::is(opt, "optin") {
            opts.optin = true;
        } else if args::is(opt, "optout") {
            opts.optout = true;
        } else if args::is(opt, "noloop") {
            opts.noloop = true;
        } else if args::is(opt, "prefix") && more {
            j += 1;
            prefixes.push(call.args[j].clone());
        } else {
            return Err(Reply::err(errors::SYNTAX));
        }
        j += 1;
    }
    if args::is(call.arg(2), "off") {
        e.disable_tracking(call.conn);
        return Ok(Reply::ok());
    }
    if !args::is(call.arg(2), "on") {
        return Err(Reply::err(errors::SYNTAX));
    }
    let Some(s) = e.sessions.get(&call.conn) else {
        return Ok(Reply::ok());
    };
    let t = &s.tracking;
    if !opts.bcast && !prefixes.is_empty() {
        return Err(Reply::err(errors::TRACKING_PREFIX_NEEDS_BCAST));
    }
    if t.on && t.bcast != opts.bcast {
        return Err(Reply::err(errors::TRACKING_BCAST_SWITCH));
    }
    if opts.bcast && (opts.optin || opts.optout) {
        return Err(Reply::err(errors::TRACKING_BCAST_OPTIN));
    }
    if opts.optin && opts.optout {
        return Err(Reply::err(errors::TRACKING_OPTIN_AND_OPTOUT));
    }
    if (opts.optin && t.optout) || (opts.optout && t.optin) {
        return Err(Reply::err(errors::TRACKING_OPT_SWITCH));
    }
    let mut late_error = None;
    if opts.bcast {
        late_error = prefix_collision(t.prefixes.as_ref(), &prefixes)?;
    }
    e.enable_tracking(call.conn, redirect, opts, &prefixes);
    Ok(match late_error {
        // Redis reports an overlap between two given prefixes other than the first, and
        // then goes on to enable tracking with all of them: two replies.
        Some(err) => Reply::Multi(vec![err, Reply::ok()]),
        None => Reply::ok(),
    })
}

/// Whether two prefixes would both match some key: one starts the other.
fn overlap(a: &[u8], b: &[u8]) -> bool {
    let n = a.len().min(b.len());
    a[..n] == b[..n]
}

/// Redis's prefix checks: a given prefix overlapping one the client has is an error; one
/// overlapping a later given prefix is an error for the first given prefix, and for the
/// others an error reply that does not stop the command (`Ok(Some)`).
fn prefix_collision(
    existing: Option<&std::collections::BTreeSet<Vec<u8>>>,
    given: &[Bytes],
) -> Result<Option<Reply>, Reply> {
    for (i, p) in given.iter().enumerate() {
        if let Some(old) = existing.into_iter().flatten().find(|old| overlap(old, p)) {
            return Err(Reply::err(errors::tracking_prefix_overlap(p, old, true)));
        }
        if let Some(other) = given[i + 1..].iter().find(|q| overlap(p, q)) {
            let err = Reply::err(errors::tracking_prefix_overlap(p, other, false));
            return if i == 0 { Err(err) } else { Ok(Some(err)) };
        }
    }
    Ok(None)
}

/// CLIENT CACHING YES|NO: whether the next command's keys are tracked, in OPTIN / OPTOUT.
fn caching(e: &mut Engine, call: &mut Call) -> CmdResult {
    let Some(s) = e.sessions.get_mut(&call.conn) else {
        return Ok(Reply::ok());
    };
    let t = &mut s.tracking;
    // Redis's text names OPTIN and OPTOUT, but only tracking being off gets it.
    if !t.on {
        return Err(Reply::err(errors::CACHING_NOT_OPT));
    }
    if args::is(call.arg(2), "yes") {
        if !t.optin {
            return Err(Reply::err(errors::CACHING_YES_OPTIN));
        }
    } else if args::is(call.arg(2), "no") {
        if !t.optout {
            return Err(Reply::err(errors::CACHING_NO_OPTOUT));
        }
    } else {
        return Err(Reply::err(errors::SYNTAX));
    }
    t.caching = true;
    Ok(Reply::ok())
}

fn getredir(e: &mut Engine, call: &mut Call) -> CmdResult {
    let redirect = e
        .sessions
        .get(&call.conn)
        .filter(|s| s.tracking.on)
        .map_or(-1, |s| s.tracking.redirect as i64);
    Ok(Reply::Int(redirect))
}

fn trackinginfo(e: &mut Engine, call: &mut Call) -> CmdResult {
    let t = e
        .sessions
        .get(&call.conn)
        .map(|s| s.tracking.clone())
        .unwrap_or_default();
    let mut flags = Vec::new();
    if !t.on {
        flags.push("off");
    } else {
        flags.push("on");
        if t.bcast {
            flags.push("bcast");
        }
        if t.optin {
            flags.push("optin");
            if t.caching {
                flags.push("caching-yes");
            }
        }
        if t.optout {
            flags.push("optout");
            if t.caching {
                flags.push("caching-no");
            }
        }
        if t.noloop {
            flags.push("noloop");
        }
        if t.broken_redirect {
            flags.push("broken_redirect");
        }
    }
    let redirect = if t.on { t.redirect as i64 } else { -1 };
    Ok(Reply::Map(vec![
        (
            Reply::bulk("flags"),
            Reply::Set(flags.into_iter().map(Reply::bulk).collect()),
        ),
        (Reply::bulk("redirect"), Reply::Int(redirect)),
        (
            Reply::bulk("prefixes"),
            Reply::bulk_array(t.prefixes.iter().flatten()),
        ),
    ]))
}

fn help(e: &mut Engine, _: &mut Call) -> CmdResult {
    Ok(crate::cmd::help::help_reply(
        e.profile(),
        "CLIENT",
        &super::client_help::lines(e.profile()),
    ))
}

/// Never called: the dispatcher resolves CLIENT to one of its subcommands.
pub(super) fn container(_: &mut Engine, call: &mut Call) -> CmdResult {
    Err(Reply::err(errors::unknown_subcommand(
        "client",
        call.args.get(1).map_or(&b""[..], |a| &a[..]),
    )))
}

const CONN: u32 = NOSCRIPT | LOADING | STALE;
const ADMIN_CONN: u32 = ADMIN | NOSCRIPT | LOADING | STALE;

pub(super) static SUBCOMMANDS: &[Command] = &[
    Command::new("id", 2, CONN, "connection", id),
    Command::new("info", 2, CONN, "connection", info),
    Command::new("list", -2, ADMIN_CONN, "connection", list),
    Command::new("kill", -3, ADMIN_CONN, "connection", kill),
    Command::new("setname", 3, CONN, "connection", setname),
    Command::new("getname", 2, CONN, "connection", getname),
    Command::new("no-evict", 3, ADMIN_CONN, "connection", no_evict),
    Command::new("no-touch", 3, CONN, "connection", no_touch),
    Command::new("setinfo", 4, CONN, "connection", setinfo),
    Command::new("reply", 3, CONN, "connection", reply),
    Command::new("unblock", -3, ADMIN_CONN, "connection", unblock),
    Command::new("pause", -3, ADMIN_CONN, "connection", pause),
    Command::new("unpause", 2, ADMIN_CONN, "connection", unpause),
    Command::new("tracking", -3, CONN, "connection", tracking),
    Command::new("caching", 3, CONN, "connection", caching),
    Command::new("getredir", 2, CONN, "connection", getredir),
    Command::new("trackinginfo", 2, CONN, "connection", trackinginfo),
    Command::new("help", 2, LOADING | STALE, "connection", help),
];
