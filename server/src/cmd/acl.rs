//! ACL: SETUSER, GETUSER, DELUSER, USERS, LIST, WHOAMI, CAT, GENPASS, LOG, DRYRUN, LOAD,
//! SAVE, HELP; and the engine-side helpers the dispatcher and `redis.call` use to ask the
//! one permission decision (`acl::check`) and log its refusals.

use bytes::Bytes;

use super::table::{flags::*, resolve, Command};
use crate::acl::{self, Denied, DeniedKind, LogEntry, User};
use crate::compat::Profile;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::numfmt;
use crate::reply::Reply;
use crate::session::ConnId;

/// The permission decision for `conn`'s user; Ok for a connection whose user may run
/// anything.
pub(crate) fn permission(
    e: &Engine,
    conn: ConnId,
    cmd: &Command,
    full: &str,
    args: &[Bytes],
) -> Result<(), Denied> {
    let Some(s) = e.sessions.get(&conn) else {
        return Ok(());
    };
    if s.acl_free {
        return Ok(());
    }
    match e.acl.user(&s.user) {
        Some(u) => acl::check(u, cmd, full, args),
        None => Err(Denied {
            kind: DeniedKind::Command,
            pos: 0,
        }),
    }
}

/// `acl::unrestricted_key_access` for `conn`'s user: true for a connection whose user may
/// run anything (and for no connection, as Redis's check passes a client without a user).
pub(crate) fn unrestricted_key_access(
    e: &Engine,
    conn: ConnId,
    cmd: &Command,
    full: &str,
    args: &[Bytes],
) -> bool {
    let Some(s) = e.sessions.get(&conn) else {
        return true;
    };
    if s.acl_free {
        return true;
    }
    e.acl
        .user(&s.user)
        .is_some_and(|u| acl::unrestricted_key_access(u, cmd, full, args))
}

/// The top-level NOPERM error.
pub(crate) fn noperm(d: Denied, full: &str) -> Reply {
    Reply::err(match d.kind {
        DeniedKind::Command => errors::noperm_command(full),
        DeniedKind::Key => errors::NOPERM_KEY.into(),
        DeniedKind::Channel => errors::NOPERM_CHANNEL.into(),
    })
}

/// The top-level NOPERM error as `conn`'s server version words it: Redis 7.0's `noperm`, or
/// from Redis 7.2 (`since::ACL_ERROR_MESSAGES`) the user's name for a command and no name
/// for a key or channel.
pub(crate) fn noperm_for(e: &Engine, conn: ConnId, d: Denied, full: &str) -> Reply {
    let user = e.sessions.get(&conn).map_or("default", |s| s.user.as_str());
    noperm_as(e.profile(), user, d, full)
}

/// `noperm_for` for a caller without the engine: the busy-script loop answers from its copy
/// of the users and the server's profile.
pub(crate) fn noperm_as(
    profile: crate::compat::Profile,
    user: &str,
    d: Denied,
    full: &str,
) -> Reply {
    if profile.has(crate::compat::since::ACL_ERROR_MESSAGES) {
        Reply::err(format!("NOPERM {}", message_72_of(user, d, full, None)))
    } else {
        noperm(d, full)
    }
}

/// Redis 7.2's getAclErrorMessage for `conn`'s user, or None under a profile older than 7.2.
/// `object` is the key or channel, named only by ACL DRYRUN (Redis's verbose form).
fn message_72(
    e: &Engine,
    conn: ConnId,
    d: Denied,
    full: &str,
    object: Option<&str>,
) -> Option<String> {
    if !e.profile().has(crate::compat::since::ACL_ERROR_MESSAGES) {
        return None;
    }
    let user = e.sessions.get(&conn).map_or("default", |s| s.user.as_str());
    Some(message_72_of(user, d, full, object))
}

fn message_72_of(user: &str, d: Denied, full: &str, object: Option<&str>) -> String {
    let kind = match d.kind {
        DeniedKind::Command => "command",
        DeniedKind::Key => "key",
        DeniedKind::Channel => "channel",
    };
    errors::acl_message_72(user, kind, full, object)
}

/// The NOPERM error of a queued command EXEC finds no longer allowed (its reasons kept 7.0's
/// words in Valkey 8.1, so they are the same under every profile).
pub(crate) fn noperm_in_exec(d: Denied) -> Reply {
    let reason = match d.kind {
        DeniedKind::Command => errors::NOPERM_EXEC_COMMAND,
        DeniedKind::Key => errors::NOPERM_EXEC_KEY,
        DeniedKind::Channel => errors::NOPERM_EXEC_CHANNEL,
    };
    Reply::err(errors::noperm_in_exec(reason))
}

/// One ACL LOG entry to add for a connection: its reason (`command`, `key`, `channel`,
/// `auth`), context, object and, for `auth`, the user named. The busy-script loop, which
/// cannot reach the log, hands these to the engine once the script is over; its other
/// catch-ups run first, in order, so the session then has the user it had at the refusal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refusal {
    pub reason: &'static str,
    pub context: &'static str,
    pub object: String,
    pub username: Option<String>,
}

impl Refusal {
    /// A command refused by the permission check (`full` as in `client|id`).
    pub(crate) fn denied(d: Denied, context: &'static str, full: &str, args: &[Bytes]) -> Refusal {
        let (reason, object) = match d.kind {
            DeniedKind::Command => ("command", full.to_string()),
            DeniedKind::Key => ("key", String::from_utf8_lossy(&args[d.pos]).into_owned()),
            DeniedKind::Channel => (
                "channel",
                String::from_utf8_lossy(&args[d.pos]).into_owned(),
            ),
        };
        Refusal {
            reason,
            context,
            object,
            username: None,
        }
    }

    /// A failed AUTH or HELLO AUTH: the object is the command's name as typed. Run by EXEC
    /// (`in_multi`), Redis logs it in the `multi` context (the client is still flagged MULTI).
    pub(crate) fn auth(command: &[u8], user: &[u8], in_multi: bool) -> Refusal {
        Refusal {
            reason: "auth",
            context: if in_multi { "multi" } else { "toplevel" },
            object: String::from_utf8_lossy(command).into_owned(),
            username: Some(String::from_utf8_lossy(user).into_owned()),
        }
    }
}

/// Adds a refusal of `conn`'s command to the ACL log.
pub(crate) fn log_denial(
    e: &mut Engine,
    conn: ConnId,
    d: Denied,
    context: &'static str,
    full: &str,
    args: &[Bytes],
) {
    log_refusal(e, conn, Refusal::denied(d, context, full, args));
}

/// Adds `r` to the ACL log, as `conn`'s.
pub(crate) fn log_refusal(e: &mut Engine, conn: ConnId, r: Refusal) {
    log(e, conn, r.reason, r.context, r.object, r.username);
}

fn log(
    e: &mut Engine,
    conn: ConnId,
    reason: &'static str,
    context: &'static str,
    object: String,
    username: Option<String>,
) {
    let now = e.clock.now_ms();
    let profile = e.profile();
    let (user, info) = match e.sessions.get(&conn) {
        Some(s) => (
            s.user.clone(),
            crate::cmd::connection::client_info_line(s, now, profile),
        ),
        None => ("default".to_string(), String::new()),
    };
    let max = e
        .config
        .get_by_name("acllog-max-len")
        .and_then(|v| v.parse::<usize>().ok())
        .unwrap_or(128);
    e.acl.record(
        LogEntry {
            count: 1,
            reason,
            context,
            object,
            username: username.unwrap_or(user),
            created_ms: now,
            client_info: info,
            entry_id: 0,
            first_ms: now,
        },
        max,
    );
}

/// `redis.call`'s permission check: the caller's user decides, refusals are logged with the
/// `lua` context and reported with the texts Redis gives inside a script.
pub(crate) fn script_permission(
    e: &mut Engine,
    conn: ConnId,
    cmd: &Command,
    parent: Option<&Command>,
    args: &[Bytes],
) -> Result<(), String> {
    if e.sessions.get(&conn).is_none_or(|s| s.acl_free) {
        return Ok(());
    }
    let full = cmd.full_name(parent);
    let Err(d) = permission(e, conn, cmd, &full, args) else {
        return Ok(());
    };
    log_denial(e, conn, d, "lua", &full, args);
    if let Some(m) = message_72(e, conn, d, &full, None) {
        return Err(errors::acl_script_failure_72(&m));
    }
    Err(match d.kind {
        DeniedKind::Command => "The user executing the script can't run this command or subcommand",
        DeniedKind::Key => "The user executing the script can't access at least one of the keys mentioned in the command arguments",
        DeniedKind::Channel => "The user executing the script can't publish to the channel mentioned in the command",
    }
    .to_string())
}

/// Logs a failed AUTH or HELLO AUTH (`command` is the command's name as typed; `in_multi`:
/// run by EXEC).
pub(crate) fn log_auth_failure(
    e: &mut Engine,
    conn: ConnId,
    command: &[u8],
    user: &[u8],
    in_multi: bool,
) {
    log_refusal(e, conn, Refusal::auth(command, user, in_multi));
}

/// Logs `conn` in as `user` (already authenticated).
pub(crate) fn login(e: &mut Engine, conn: ConnId, user: &[u8]) {
    let name = String::from_utf8_lossy(user).into_owned();
    let free = e.acl.user(&name).is_some_and(User::unrestricted);
    if let Some(s) = e.sessions.get_mut(&conn) {
        s.authenticated = true;
        s.user = name;
        s.acl_free = free;
    }
}

/// After users changed: every connection's shortcut follows its user again; connections
/// of a user that is gone, and subscribers to a channel their user may no longer use, are
/// closed, as Redis does.
pub(crate) fn refresh_sessions(e: &mut Engine, caller: ConnId) {
    let mut gone = Vec::new();
    for s in e.sessions.values_mut() {
        match e.acl.user(&s.user) {
            Some(u) => {
                s.acl_free = u.unrestricted();
                let subs = s.channels.iter().chain(s.shard_channels.iter());
                if !acl::check::subscriptions_allowed(u, subs, s.patterns.iter()) {
                    gone.push(s.id);
                }
            }
            None => {
                s.acl_free = false;
                gone.push(s.id);
            }
        }
    }
    gone.sort_unstable();
    for id in gone {
        crate::cmd::connection::kill_connection(e, caller, id);
    }
}

fn text(a: &[u8]) -> String {
    String::from_utf8_lossy(a).into_owned()
}

fn setuser(e: &mut Engine, call: &mut Call) -> Result<Reply, Reply> {
    let name = text(call.arg(2));
    if name.contains(' ') || name.contains('\0') {
        return Err(Reply::err(errors::USERNAMES_CAN_T_CONTAIN_SPACES_OR));
    }
    let raw: Vec<String> = call.args[3..].iter().map(|a| text(a)).collect();
    let rules = acl::model::split_rules(&raw)
        .map_err(|start| Reply::err(errors::selector_unmatched(&start)))?;
    let all_channels = pubsub_default_all(e);
    let mut user = e
        .acl
        .user(&name)
        .cloned()
        .unwrap_or_else(|| new_user(&name, all_channels));
    for r in &rules {
        apply_rule(&mut user, r, all_channels, e.profile())
            .map_err(|err| Reply::err(errors::setuser_modifier(r, err.text())))?;
    }
    e.acl.users.insert(name, user);
    refresh_sessions(e, call.conn);
    Ok(Reply::ok())
}

/// acl-pubsub-default is allchannels: a new or reset user may use every channel.
fn pubsub_default_all(e: &Engine) -> bool {
    e.config.get_by_name("acl-pubsub-default").as_deref() == Some("allchannels")
}

/// A user as ACL SETUSER or an ACL file line creates it, its channels per
/// acl-pubsub-default.
pub(crate) fn new_user(name: &str, all_channels: bool) -> User {
    let mut u = User::new(name);
    if all_channels {
        u.apply("allchannels").expect("valid rule");
    }
    u
}

/// One rule; `reset` gives the channels acl-pubsub-default gives a new user, as Redis does.
pub(crate) fn apply_rule(
    user: &mut User,
    rule: &str,
    all_channels: bool,
    profile: Profile,
) -> Result<(), acl::model::RuleError> {
    user.apply_in(rule, profile)?;
    if all_channels && rule.eq_ignore_ascii_case("reset") {
        user.apply("allchannels")?;
    }
    Ok(())
}

fn selector_fields(s: &acl::model::Selector) -> Vec<(Reply, Reply)> {
    vec![
        (Reply::bulk("commands"), Reply::bulk(s.describe_commands())),
        (Reply::bulk("keys"), Reply::bulk(s.describe_keys())),
        (Reply::bulk("channels"), Reply::bulk(s.describe_channels())),
    ]
}

fn getuser(e: &mut Engine, call: &mut Call) -> Result<Reply, Reply> {
    let Some(u) = e.acl.user(&text(call.arg(2))) else {
        return Ok(Reply::Nil);
    };
    let u = &shown(e, u);
    let mut fields = vec![
        (
            Reply::bulk("flags"),
            Reply::Set(u.flags().into_iter().map(Reply::bulk).collect()),
        ),
        (
            Reply::bulk("passwords"),
            Reply::Array(u.passwords.iter().map(Reply::bulk).collect()),
        ),
    ];
    fields.extend(selector_fields(&u.root));
    fields.push((
        Reply::bulk("selectors"),
        Reply::Array(
            u.selectors
                .iter()
                .map(|s| Reply::Map(selector_fields(s)))
                .collect(),
        ),
    ));
    Ok(Reply::Map(fields))
}

fn deluser(e: &mut Engine, call: &mut Call) -> Result<Reply, Reply> {
    let names: Vec<String> = call.args[2..].iter().map(|a| text(a)).collect();
    if names.iter().any(|n| n == "default") {
        return Err(Reply::err(errors::THE_DEFAULT_USER_CANNOT_BE_REMOVED));
    }
    let removed = names
        .iter()
        .filter(|n| e.acl.users.remove(n.as_str()).is_some())
        .count();
    refresh_sessions(e, call.conn);
    Ok(Reply::Int(removed as i64))
}

fn users(e: &mut Engine, _: &mut Call) -> Result<Reply, Reply> {
    Ok(Reply::Array(e.acl.users.keys().map(Reply::bulk).collect()))
}

fn list(e: &mut Engine, _: &mut Call) -> Result<Reply, Reply> {
    Ok(Reply::Array(
        e.acl
            .users
            .values()
            .map(|u| Reply::bulk(shown(e, u).describe()))
            .collect(),
    ))
}

fn whoami(e: &mut Engine, call: &mut Call) -> Result<Reply, Reply> {
    let user = e
        .sessions
        .get(&call.conn)
        .map_or("default".to_string(), |s| s.user.clone());
    Ok(Reply::bulk(user))
}

/// Redis's answer to a subcommand given too many arguments, naming it as the user wrote it.
fn too_many_args(call: &Call) -> Reply {
    Reply::err(errors::acl_subcommand_syntax(&text(call.arg(1))))
}

fn cat(e: &mut Engine, call: &mut Call) -> Result<Reply, Reply> {
    if call.argc() > 3 {
        return Err(too_many_args(call));
    }
    if call.argc() == 2 {
        return Ok(Reply::Array(
            acl::commands::CATEGORIES.iter().map(Reply::bulk).collect(),
        ));
    }
    let name = text(call.arg(2)).to_ascii_lowercase();
    if !acl::commands::CATEGORIES.contains(&name.as_str()) {
        return Err(Reply::err(errors::unknown_category(call.arg(2))));
    }
    Ok(Reply::Array(
        acl::commands::in_category_in(e.profile(), &name)
            .iter()
            // Only the commands the profile has (XDELEX is @stream from Redis 8.2 on).
            .filter(|n| e.profile().has(crate::compat::since::of(n)))
            .map(|n| Reply::bulk(*n))
            .collect(),
    ))
}

fn genpass(e: &mut Engine, call: &mut Call) -> Result<Reply, Reply> {
    if call.argc() > 3 {
        return Err(too_many_args(call));
    }
    let bits = if call.argc() > 2 {
        numfmt::parse_i64(call.arg(2)).ok_or_else(|| Reply::err(errors::NOT_INTEGER))?
    } else {
        256
    };
    if !(1..=4096).contains(&bits) {
        return Err(Reply::err(errors::ACL_GENPASS_ARGUMENT_MUST_BE_THE));
    }
    let chars = (bits as usize).div_ceil(4);
    let mut out = String::with_capacity(chars);
    while out.len() < chars {
        let word = e.rng.next_u64();
        out.push_str(&format!("{word:016x}"));
    }
    out.truncate(chars);
    Ok(Reply::bulk(out))
}

fn log_cmd(e: &mut Engine, call: &mut Call) -> Result<Reply, Reply> {
    // Without a count, the newest 10, as Redis.
    let mut count = 10;
    if call.argc() == 3 {
        if call.arg(2).eq_ignore_ascii_case(b"reset") {
            e.acl.log.clear();
            return Ok(Reply::ok());
        }
        let n = numfmt::parse_i64(call.arg(2)).ok_or_else(|| Reply::err(errors::NOT_INTEGER))?;
        count = n.max(0) as usize;
    } else if call.argc() > 3 {
        return Err(too_many_args(call));
    }
    let now = e.clock.now_ms();
    let with_ids = e.profile().has(crate::compat::since::ACL_LOG_ENTRY_IDS);
    Ok(Reply::Array(
        e.acl
            .log
            .iter()
            .take(count)
            .map(|l| {
                let mut fields = vec![
                    (Reply::bulk("count"), Reply::Int(l.count as i64)),
                    (Reply::bulk("reason"), Reply::bulk(l.reason)),
                    (Reply::bulk("context"), Reply::bulk(l.context)),
                    (Reply::bulk("object"), Reply::bulk(&l.object)),
                    (Reply::bulk("username"), Reply::bulk(&l.username)),
                    (
                        Reply::bulk("age-seconds"),
                        Reply::Double((now - l.created_ms).max(0) as f64 / 1000.0),
                    ),
                    (Reply::bulk("client-info"), Reply::bulk(&l.client_info)),
                ];
                if with_ids {
                    fields.extend([
                        (Reply::bulk("entry-id"), Reply::Int(l.entry_id as i64)),
                        (Reply::bulk("timestamp-created"), Reply::Int(l.first_ms)),
                        (
                            Reply::bulk("timestamp-last-updated"),
                            Reply::Int(l.created_ms),
                        ),
                    ]);
                }
                Reply::Map(fields)
            })
            .collect(),
    ))
}

fn dryrun(e: &mut Engine, call: &mut Call) -> Result<Reply, Reply> {
    let name = text(call.arg(2));
    let Some(user) = e.acl.user(&name) else {
        return Err(Reply::err(errors::user_not_found(call.arg(2))));
    };
    let args = &call.args[3..];
    let (cmd, full) = match resolve(args) {
        Ok(found) => found,
        // Redis looks the command and its subcommand up together: an unknown subcommand
        // of a container is a command not found, named by its first word (a C string).
        Err(Reply::Error(t))
            if t.starts_with("ERR unknown command") || t.starts_with("ERR unknown subcommand") =>
        {
            return Err(Reply::err(errors::command_not_found(&args[0])))
        }
        Err(err) => return Err(err),
    };
    let verdict = acl::check(user, cmd, &full, args);
    if let Err(d) = verdict {
        if e.profile().has(crate::compat::since::ACL_ERROR_MESSAGES) {
            let object = (d.kind != DeniedKind::Command).then(|| text(&args[d.pos]));
            return Ok(Reply::bulk(message_72_of(
                &name,
                d,
                &full,
                object.as_deref(),
            )));
        }
    }
    Ok(match verdict {
        Ok(()) => Reply::ok(),
        Err(d) => Reply::bulk(match d.kind {
            DeniedKind::Command => errors::dryrun_command(&full),
            DeniedKind::Key => errors::dryrun_key(&text(&args[d.pos])),
            DeniedKind::Channel => errors::dryrun_channel(&text(&args[d.pos])),
        }),
    })
}

fn aclfile(e: &Engine) -> Result<String, Reply> {
    let text = if e.profile().has(crate::compat::since::VALKEY_SERVER_API) {
        errors::NO_ACLFILE_VALKEY
    } else {
        errors::NO_ACLFILE
    };
    aclfile_path(&e.config).ok_or_else(|| Reply::err(text))
}

/// A user as this server version shows it (ACL LIST, GETUSER, SAVE, CONFIG REWRITE): Valkey
/// 8 creates users with `sanitize-payload` (`since::ACL_SANITIZE_SHOWN`), so one never given
/// the flag or its opposite shows it there; from Redis 7.2 the command rules print as given
/// (`since::ACL_RULES_AS_GIVEN`).
pub(crate) fn shown(e: &Engine, u: &User) -> User {
    let mut u = u.clone();
    if u.sanitize.is_none() && e.profile().has(crate::compat::since::ACL_SANITIZE_SHOWN) {
        u.sanitize = Some(true);
    }
    if e.profile().has(crate::compat::since::ACL_RULES_AS_GIVEN) {
        for s in std::iter::once(&mut u.root).chain(u.selectors.iter_mut()) {
            s.rules_as_given = true;
        }
    }
    u
}

/// The aclfile's path: a relative one is under `dir`, where redis-server runs from.
fn aclfile_path(config: &crate::Config) -> Option<String> {
    let f = config.get_by_name("aclfile").filter(|f| !f.is_empty())?;
    let dir = config.extra.get("dir").filter(|d| !d.is_empty());
    match dir {
        Some(d) if std::path::Path::new(&f).is_relative() => {
            Some(std::path::Path::new(d).join(&f).display().to_string())
        }
        _ => Some(f),
    }
}

/// Loads the aclfile, when one is configured, into a new server's users (Redis reads it
/// at start). The error says why the file was not loaded; the users are then left as they
/// were.
pub(crate) fn load_at_start(acl: &mut acl::Acl, config: &crate::Config) -> Result<(), String> {
    let Some(path) = aclfile_path(config) else {
        return Ok(());
    };
    let body = std::fs::read_to_string(&path)
        .map_err(|err| format!("Error loading ACLs opening file '{path}': {err}"))?;
    let all = config.get_by_name("acl-pubsub-default").as_deref() == Some("allchannels");
    let loaded = parse_acl_file(&body, all, config.compat)?;
    let mut users = std::collections::BTreeMap::new();
    users.insert("default".to_string(), User::default_user());
    for u in loaded {
        users.insert(u.name.clone(), u);
    }
    acl.users = users;
    Ok(())
}

fn save(e: &mut Engine, _: &mut Call) -> Result<Reply, Reply> {
    let path = aclfile(e)?;
    let mut out = String::new();
    for u in e.acl.users.values() {
        out.push_str(&shown(e, u).describe());
        out.push('\n');
    }
    std::fs::write(&path, out).map_err(|err| Reply::err(errors::aclfile_save(&err)))?;
    Ok(Reply::ok())
}

/// Reads an ACL file into users; the whole file or nothing, as Redis loads it.
pub(crate) fn parse_acl_file(
    text: &str,
    all_channels: bool,
    profile: Profile,
) -> Result<Vec<User>, String> {
    let mut users: Vec<User> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let words: Vec<String> = line.split_ascii_whitespace().map(str::to_string).collect();
        if words[0] != "user" || words.len() < 2 {
            return Err(errors::aclfile_no_user_keyword(i + 1));
        }
        let mut u = new_user(&words[1], all_channels);
        let rules = acl::model::split_rules(&words[2..])
            .map_err(|s| errors::aclfile_unmatched(i + 1, &s))?;
        for r in &rules {
            apply_rule(&mut u, r, all_channels, profile)
                .map_err(|err| errors::aclfile_rule(i + 1, r, err.text()))?;
        }
        if users.iter().any(|x| x.name == u.name) {
            return Err(errors::aclfile_duplicate(i + 1, &u.name));
        }
        users.push(u);
    }
    Ok(users)
}

fn load(e: &mut Engine, call: &mut Call) -> Result<Reply, Reply> {
    let path = aclfile(e)?;
    let body = std::fs::read_to_string(&path)
        .map_err(|err| Reply::err(errors::aclfile_open(&path, &err)))?;
    let loaded = parse_acl_file(&body, pubsub_default_all(e), e.profile())
        .map_err(|m| Reply::err(errors::aclfile_load(&m)))?;
    let mut users = std::collections::BTreeMap::new();
    users.insert("default".to_string(), User::default_user());
    for u in loaded {
        users.insert(u.name.clone(), u);
    }
    e.acl.users = users;
    // Redis frees every user but `default` on a load, and with them their clients, even
    // when the file defines the user again.
    let mut freed: Vec<ConnId> = e
        .sessions
        .values()
        .filter(|s| s.user != "default")
        .map(|s| s.id)
        .collect();
    freed.sort_unstable();
    for id in freed {
        crate::cmd::connection::kill_connection(e, call.conn, id);
    }
    refresh_sessions(e, call.conn);
    Ok(Reply::ok())
}

fn help(e: &mut Engine, _: &mut Call) -> Result<Reply, Reply> {
    Ok(crate::cmd::help::help_reply(
        e.profile(),
        "ACL",
        &[
            "CAT [<category>]",
            "    List all commands that belong to <category>, or all command categories",
            "    when no category is specified.",
            "DELUSER <username> [<username> ...]",
            "    Delete a list of users.",
            "DRYRUN <username> <command> [<arg> ...]",
            "    Returns whether the user can execute the given command without executing the command.",
            "GETUSER <username>",
            "    Get the user's details.",
            "GENPASS [<bits>]",
            "    Generate a secure 256-bit user password. The optional `bits` argument can",
            "    be used to specify a different size.",
            "LIST",
            "    Show users details in config file format.",
            "LOAD",
            "    Reload users from the ACL file.",
            "LOG [<count> | RESET]",
            "    Show the ACL log entries.",
            "SAVE",
            "    Save the current config to the ACL file.",
            "SETUSER <username> <attribute> [<attribute> ...]",
            "    Create or modify a user with the specified attributes.",
            "USERS",
            "    List all the registered usernames.",
            "WHOAMI",
            "    Return the current connection username.",
        ],
    ))
}

/// Never called: the dispatcher resolves ACL to one of its subcommands.
fn container(_: &mut Engine, call: &mut Call) -> Result<Reply, Reply> {
    Err(Reply::err(errors::unknown_subcommand(
        "acl",
        call.args.get(1).map_or(&b""[..], |a| &a[..]),
    )))
}

const ADM: u32 = ADMIN | NOSCRIPT | LOADING | STALE;

static SUBCOMMANDS: &[Command] = &[
    Command::new("cat", -2, NOSCRIPT | LOADING | STALE, "server", cat),
    Command::new("deluser", -3, ADM, "server", deluser),
    Command::new("dryrun", -4, ADM, "server", dryrun),
    Command::new("genpass", -2, NOSCRIPT | LOADING | STALE, "server", genpass),
    Command::new("getuser", 3, ADM, "server", getuser),
    Command::new("help", 2, LOADING | STALE, "server", help),
    Command::new("list", 2, ADM, "server", list),
    Command::new("load", 2, ADM, "server", load),
    Command::new("log", -2, ADM, "server", log_cmd),
    Command::new("save", 2, ADM, "server", save),
    Command::new("setuser", -3, ADM, "server", setuser),
    Command::new("users", 2, ADM, "server", users),
    Command::new("whoami", 2, NOSCRIPT | LOADING | STALE, "server", whoami),
];

pub static COMMANDS: &[Command] =
    &[Command::new("acl", -2, 0, "server", container).subcommands(SUBCOMMANDS)];
