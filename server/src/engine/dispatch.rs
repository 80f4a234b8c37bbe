//! The dispatcher: resolving a command, every check the command table implies, then the
//! handler; and the nested path EXEC and scripts take.

use bytes::Bytes;

use super::{resolve, view_of, Call, Engine};
use crate::cmd::table::{flags, policy, Command};
use crate::reply::Reply;
use crate::session::ConnId;

impl Engine {
    /// The dispatcher: every check the command table implies, then the handler.
    pub(super) fn process(&mut self, conn: ConnId, args: Vec<Bytes>) -> Reply {
        let asking = self.cluster.is_some() && args[0].eq_ignore_ascii_case(b"asking");
        let reply = self.dispatch(conn, args);
        if self.repl.feeding() {
            // The unit ends before blocked clients it woke are served (units of their own).
            self.repl_flush();
        }
        if self.cluster.is_some() {
            crate::cluster::after_command(self, conn, asking);
        }
        if let Some(text) = reply.error_text() {
            self.stats.count_reply_error(&text);
        } else {
            self.stats.counted_in_script.clear();
        }
        reply
    }

    pub(super) fn dispatch(&mut self, conn: ConnId, mut args: Vec<Bytes>) -> Reply {
        // `rename-command`: from here on the line names the table's command; SLOWLOG and
        // MONITOR show the name the client typed, as Redis does.
        let typed = (!self.config.renames.is_empty()).then(|| args[0].clone());
        if !self.config.renames.translate(&mut args) {
            let err = Reply::err(crate::errors::unknown_command(&args[0], &args[1..]));
            return self.reject(conn, &args[0].clone(), err);
        }
        let session = self.sessions.get_mut(&conn).expect("session exists");
        session.last_interaction_ms = self.now_ms;
        let in_multi = session.multi.is_some();
        // Nothing before the handler changes these; read them while the session is at hand.
        let (db, resp) = (session.db, session.resp);

        let (cmd, name) = match crate::cmd::table::resolve_for(self.config.compat, &args) {
            Ok(found) => found,
            Err(e) => {
                self.note_refused_command(&args);
                if let Some((cmd, name)) =
                    crate::cmd::table::named_command(self.config.compat, &args)
                {
                    self.stats.record_rejected(cmd, &name);
                }
                return self.reject(conn, &args[0], e);
            }
        };
        session.last_command = name.clone();
        // DEBUG and MODULE obey their enable-* option, right after the arity check (Redis).
        // Only those two are looked at, so other commands pay one comparison of the name.
        if matches!(cmd.name, "debug" | "module") {
            if let Some(refused) =
                crate::config::protected::command_refusal(&self.config, cmd.name, &session.addr)
            {
                self.stats.record_rejected(cmd, &name);
                return self.reject(conn, &args[0], Reply::err(refused));
            }
        }
        let view = view_of(session);
        if self.tracking.clients > 0 {
            self.tracking_limit();
        }
        // Clients over maxmemory-clients go first, before keys (Redis's evictClients); a
        // client evicted so does not run its command.
        if self.config.maxmemory_clients != "0" && self.evict_clients(Some(conn)) {
            return Reply::None;
        }
        // Redis refuses on memory after the MULTI check and before the pub/sub context check.
        // Eviction runs before every command (Redis's performEvictions); still over the
        // limit, what may grow memory is refused.
        let oom = self.config.maxmemory > 0
            && !self.perform_evictions()
            && crate::cmd::scripting::refused_when_over(self, conn, cmd, &args);
        // Valkey 8 flags MULTI and WATCH no-multi: inside a transaction they get the generic
        // refusal, which aborts it (Redis 7.0 answers with their own texts and keeps it).
        if in_multi
            && matches!(cmd.name, "multi" | "watch")
            && self.config.compat.family() == crate::compat::Family::Valkey
            && self.config.compat.level() >= 80
        {
            self.stats.record_rejected(cmd, &name);
            return self.reject(
                conn,
                &args[0],
                Reply::err(crate::errors::NOT_ALLOWED_IN_MULTI),
            );
        }
        let mut denied = None;
        let loading = self.loading.is_some();
        let admitted = crate::admission::admit(cmd, &name, &view, None, loading, oom, || {
            crate::cmd::acl::permission(self, conn, cmd, &name, &args).map_err(|d| {
                denied = Some(d);
                crate::cmd::acl::noperm_for(self, conn, d, &name)
            })
        });
        if let Err(e) = admitted {
            self.stats.record_rejected(cmd, &name);
            if let Some(d) = denied {
                let context = if in_multi { "multi" } else { "toplevel" };
                crate::cmd::acl::log_denial(self, conn, d, context, &name, &args);
            }
            return self.reject(conn, &args[0], e);
        }
        // min-replicas-to-write not met: writes are refused (after the memory check in Redis;
        // before the pub/sub and busy checks, which a write passing admission has passed).
        if crate::cmd::scripting::replicas_short(self)
            && crate::cmd::scripting::is_write(self, conn, cmd, &args)
        {
            self.stats.record_rejected(cmd, &name);
            return self.reject(conn, &args[0], Reply::err(crate::errors::NOREPLICAS));
        }
        // Redis Cluster: this node must serve the keys (MOVED, ASK, CROSSSLOT ... otherwise).
        // (Never the stream of this replica's primary: it applies what the primary took.)
        if self.cluster.is_some() && !self.repl.is_primary_link(conn) {
            if let Err(redirect) = crate::cluster::admit(self, conn, cmd, &args) {
                if cmd.name == "exec" {
                    crate::cmd::transactions::discard_transaction(self, conn);
                } else {
                    self.flag_transaction(conn);
                }
                self.stats.record_rejected(cmd, &name);
                return redirect.reply();
            }
        }
        // Only a replica refuses its clients' writes (`repl::commands::refusal`).
        if self.repl.is_replica() {
            if let Some(refused) = crate::repl::commands::refusal(self, conn, cmd, &args) {
                return self.reject(conn, &args[0], refused);
            }
        }
        if self.postpone_if_paused(conn, cmd, &args, typed.as_ref()) {
            return Reply::None;
        }
        if in_multi && !cmd.policy(policy::NOT_QUEUED) {
            let s = self.sessions.get_mut(&conn).expect("session exists");
            let m = s.multi.as_mut().expect("in multi");
            if let Some(t) = typed {
                m.typed.push((m.queue.len(), t));
            }
            m.queue.push(args);
            return Reply::Status("QUEUED".into());
        }
        match &typed {
            Some(t) if cmd.feeds_monitors_first() => {
                let shown = shown_as_typed(&args, t);
                self.feed_monitors_first(conn, db, &shown, cmd);
            }
            _ => self.feed_monitors_first(conn, db, &args, cmd),
        }
        let fault = self.check_faults(conn, cmd, &name, &args);
        if let Some(early) = self.fault_before(conn, fault.as_ref()) {
            return early;
        }
        let mut call = Call {
            conn,
            db,
            resp,
            args,
            in_script: false,
            in_multi: false,
            reprocessing: false,
        };
        // The handler's own duration, in real time, for INFO commandstats, SLOWLOG, the
        // latency monitor and latency-tracking (see `crate::slowlog`, `crate::latency`).
        // Redis times every call, whatever those are set to.
        let started = crate::clock::monotonic_us();
        self.tracking.executing = true;
        self.call_started = Some(started);
        let reply = self.call(cmd, &mut call);
        self.call_started = None;
        let us = self.elapsed_us(started);
        if let Some(t) = &typed {
            call.args[0] = t.clone();
        }
        self.note_slow(conn, cmd, &call.args, &reply, us);
        // After the command, as Redis: EXEC's line follows its commands', and SELECT's shows
        // the database it chose.
        self.feed_monitors(conn, MonitorFrom::Client, call.db, &call.args, cmd);
        self.arg_buffer.recycle(call.args);
        // A command that blocked is counted when it is served or times out, as in Redis,
        // with the time this call took. The connection's own count (Valkey's tot-cmds)
        // takes every call, in the same session look-up.
        let blocked = match self.sessions.get_mut(&conn) {
            Some(s) => {
                s.commands_run += 1;
                match s.blocked.as_mut() {
                    Some(b) if reply == Reply::None => {
                        b.first_us = us;
                        if !b.postponed {
                            b.typed = typed;
                        }
                        true
                    }
                    _ => false,
                }
            }
            None => false,
        };
        if !blocked {
            self.count_call(cmd, &name, reply.is_error(), us);
        }
        self.fault_after(conn, fault, reply)
    }

    /// A command the dispatcher refuses (Redis's rejectCommand): an open transaction is
    /// flagged so EXEC answers EXECABORT; a refused EXEC discards the transaction at once.
    pub(super) fn reject(&mut self, conn: ConnId, name: &[u8], err: Reply) -> Reply {
        if name.eq_ignore_ascii_case(b"exec") {
            if let Reply::Error(text) = &err {
                return crate::cmd::transactions::exec_abort(self, conn, text);
            }
        }
        self.flag_transaction(conn);
        err
    }

    /// Marks the connection's open transaction so EXEC answers EXECABORT (a command of it
    /// was refused); nothing when no transaction is open.
    pub(crate) fn flag_transaction(&mut self, conn: ConnId) {
        if let Some(m) = self.sessions.get_mut(&conn).and_then(|s| s.multi.as_mut()) {
            m.aborted = true;
        }
    }

    /// Runs a resolved command's handler with no checks: EXEC and scripts come here after
    /// doing their own.
    pub(crate) fn call(&mut self, cmd: &'static Command, call: &mut Call) -> Reply {
        self.call_epoch = self.call_epoch.wrapping_add(1);
        let no_touch = self.any_no_touch
            && cmd.name != "touch"
            && self.sessions.get(&call.conn).is_some_and(|s| s.no_touch);
        self.dbs[call.db].no_touch = no_touch;
        // Changes the handler makes are this client's, except a script's own (Redis runs
        // those on its script client): BCAST's NOLOOP tells them apart.
        let modifier = std::mem::replace(
            &mut self.tracking.modifier,
            (!call.in_script).then_some(call.conn),
        );
        let script = self.tracking_before_script(cmd, call);
        // Hash field deadlines (`db::hash_ttl`): only once some field has one.
        let field_ttls = !self.hash_ttl.is_empty();
        if field_ttls {
            self.hash_ttl_before(cmd, call);
        }
        let dirty = self.dirty;
        let reply = cmd.handler.run(self, call);
        // Every call counts once, after it ran (so INFO leaves itself out and CONFIG
        // RESETSTAT counts itself), as Redis's call(); refusals never got here, and a
        // blocked command served later is not called again in Redis 7.0.
        if !call.reprocessing {
            self.stats.total_commands_processed += 1;
        }
        if self.repl.feeding() {
            self.repl_after_call(cmd, call, &reply, dirty);
        }
        if field_ttls || !self.hash_ttl.is_empty() {
            self.hash_ttl_after(cmd, call, &reply);
        }
        if script {
            self.tracking.script_keys = None;
        }
        self.tracking.modifier = modifier;
        self.dbs[call.db].no_touch = false;
        if self.tracking.clients > 0 {
            self.tracking_after_call(cmd, call);
        }
        reply
    }

    /// Runs one of EXEC's commands: resolves it, asks ACL again, then calls it with the
    /// given context. `typed`: under `rename-command`, the name the client typed, which its
    /// MONITOR and SLOWLOG lines show.
    pub(crate) fn run_queued(&mut self, call: &mut Call, typed: Option<Bytes>) -> Reply {
        let reply = self.run_nested_unit(call, typed);
        // Each error among EXEC's replies is an error reply Redis counts (errorstats,
        // total_error_replies) as it writes it; a script's are counted where redis.call
        // returns them.
        if call.in_multi && !call.in_script {
            if let Some(text) = reply.error_text() {
                self.stats.count_reply_error(&text);
            }
        }
        reply
    }

    fn run_nested_unit(&mut self, call: &mut Call, typed: Option<Bytes>) -> Reply {
        match resolve(&call.args) {
            Ok((cmd, name)) => {
                // EXEC asks again: the user's permissions may have changed since queueing.
                if call.in_multi {
                    if let Err(d) =
                        crate::cmd::acl::permission(self, call.conn, cmd, &name, &call.args)
                    {
                        crate::cmd::acl::log_denial(self, call.conn, d, "multi", &name, &call.args);
                        return crate::cmd::acl::noperm_in_exec(d);
                    }
                }
                // EXEC's commands are logged one by one, as in Redis (a script's are logged by
                // redis.call, `note_slow_in_script`); both count in latency-tracking.
                let started = crate::clock::monotonic_us();
                match &typed {
                    Some(t) if cmd.feeds_monitors_first() => {
                        let shown = shown_as_typed(&call.args, t);
                        self.feed_monitors_first(call.conn, call.db, &shown, cmd);
                    }
                    _ => self.feed_monitors_first(call.conn, call.db, &call.args, cmd),
                }
                self.call_started = Some(started);
                let reply = self.call(cmd, call);
                self.call_started = None;
                let us = self.elapsed_us(started);
                if let Some(t) = typed {
                    call.args[0] = t;
                }
                if call.in_multi && !call.in_script {
                    self.note_slow(call.conn, cmd, &call.args, &reply, us);
                }
                self.feed_monitors(call.conn, MonitorFrom::Client, call.db, &call.args, cmd);
                self.count_command_run(call.conn);
                self.count_call(cmd, &name, reply.is_error(), us);
                reply
            }
            Err(e) => e,
        }
    }

    /// Sends one MONITOR line for a command that ran, to every monitoring connection (the
    /// sender included). As in Redis: admin commands and those flagged skip_monitor are never shown
    /// (the script commands show themselves before they run, see
    /// `Command::feeds_monitors_first`), and secrets in the arguments read `(redacted)`.
    pub(crate) fn feed_monitors(
        &mut self,
        conn: ConnId,
        from: MonitorFrom,
        db: usize,
        args: &[Bytes],
        cmd: &Command,
    ) {
        if self.monitors.is_empty() || cmd.has(flags::SKIP_MONITOR) || cmd.has(flags::ADMIN) {
            return;
        }
        self.send_monitor_line(conn, from, db, args);
    }

    /// The script commands' own line, sent before they run (see
    /// `Command::feeds_monitors_first`); nothing for other commands.
    fn feed_monitors_first(&mut self, conn: ConnId, db: usize, args: &[Bytes], cmd: &Command) {
        if cmd.feeds_monitors_first() {
            self.send_monitor_line(conn, MonitorFrom::Client, db, args);
        }
    }

    fn send_monitor_line(&mut self, conn: ConnId, from: MonitorFrom, db: usize, args: &[Bytes]) {
        if self.monitors.is_empty() {
            return;
        }
        let addr = match from {
            MonitorFrom::Lua => "lua".to_string(),
            MonitorFrom::Client => match self.sessions.get(&conn) {
                Some(s) => s.addr.clone(),
                None => return,
            },
        };
        let mut shown = args.to_vec();
        crate::slowlog::redact(&mut shown);
        let line = crate::cmd::server::monitor_line(self.clock.now_us(), db, &addr, &shown);
        // The sender too, when it monitors: Redis shows a monitor its own commands.
        let running = self.tracking.current;
        for m in self.monitors.clone() {
            if m == conn && running == Some(conn) {
                self.own_monitor_lines.push(Reply::Status(line.clone()));
            } else {
                self.push_to(m, Reply::Status(line.clone()));
            }
        }
    }
}

/// Who a MONITOR line names as the sender: the client's address, or `lua` for a command a
/// script or function ran with redis.call.
#[derive(Clone, Copy)]
pub(crate) enum MonitorFrom {
    Client,
    Lua,
}

impl Engine {
    /// One more command run by `conn` (CLIENT LIST's `tot-cmds` under Valkey 8).
    pub(crate) fn count_command_run(&mut self, conn: ConnId) {
        if let Some(s) = self.sessions.get_mut(&conn) {
            s.commands_run += 1;
        }
    }
}

/// A command line as MONITOR shows it under `rename-command`: with the name the client typed.
fn shown_as_typed(args: &[Bytes], typed: &Bytes) -> Vec<Bytes> {
    let mut shown = args.to_vec();
    shown[0] = typed.clone();
    shown
}
