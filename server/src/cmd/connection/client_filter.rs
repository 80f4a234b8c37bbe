//! CLIENT LIST and CLIENT KILL filters as Valkey 8 reads them: any number of filters, all of
//! which a client must pass; `ID` takes every client id that follows it (none at all is
//! allowed and matches no client); `MAXAGE` keeps clients at least that many seconds old.
//! Redis 7.0's forms (one TYPE or one ID list for LIST; one value per option for KILL) stay
//! in `client.rs`.

use super::client::{client_type, client_type_by_name, ClientType};
use crate::cmd::args;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::numfmt;
use crate::reply::Reply;
use crate::session::{ConnId, Session};

/// The filters of one CLIENT LIST / CLIENT KILL line.
#[derive(Default)]
pub(super) struct Filter {
    addr: Option<Vec<u8>>,
    laddr: Option<Vec<u8>>,
    ctype: Option<ClientType>,
    ids: Option<Vec<ConnId>>,
    user: Option<String>,
    /// SKIPME as given; the default is the command's (LIST: no, KILL: yes).
    pub skipme: Option<bool>,
    maxage: Option<i64>,
}

impl Filter {
    /// Reads the filters from argument 2 on, with Valkey 8.1's errors in its order.
    pub(super) fn parse(e: &Engine, call: &Call) -> Result<Filter, Reply> {
        let mut f = Filter::default();
        let mut i = 2;
        while i < call.argc() {
            let opt = call.arg(i);
            if args::is(opt, "ID") {
                let ids = f.ids.get_or_insert_with(Vec::new);
                i += 1;
                while i < call.argc() {
                    let Some(n) = numfmt::parse_i64(call.arg(i)) else {
                        break;
                    };
                    if n < 1 {
                        return Err(Reply::err(errors::CLIENT_ID_POSITIVE));
                    }
                    ids.push(n as ConnId);
                    i += 1;
                }
                continue;
            }
            if i + 1 >= call.argc() {
                return Err(Reply::err(errors::SYNTAX));
            }
            let val = call.arg(i + 1);
            if args::is(opt, "TYPE") {
                f.ctype = Some(
                    client_type_by_name(val)
                        .ok_or_else(|| Reply::err(errors::unknown_client_type(val)))?,
                );
            } else if args::is(opt, "ADDR") {
                f.addr = Some(val.to_vec());
            } else if args::is(opt, "LADDR") {
                f.laddr = Some(val.to_vec());
            } else if args::is(opt, "USER") {
                let name = String::from_utf8_lossy(val).into_owned();
                if e.acl.user(&name).is_none() {
                    return Err(Reply::err(errors::no_such_user(val)));
                }
                f.user = Some(name);
            } else if args::is(opt, "SKIPME") {
                f.skipme = Some(if args::is(val, "yes") {
                    true
                } else if args::is(val, "no") {
                    false
                } else {
                    return Err(Reply::err(errors::SYNTAX));
                });
            } else if args::is(opt, "MAXAGE") {
                let age =
                    numfmt::parse_i64(val).ok_or_else(|| Reply::err(errors::MAXAGE_NOT_INTEGER))?;
                if age <= 0 {
                    return Err(Reply::err(errors::MAXAGE_POSITIVE));
                }
                f.maxage = Some(age);
            } else {
                return Err(Reply::err(errors::SYNTAX));
            }
            i += 2;
        }
        Ok(f)
    }

    /// Whether `s` passes every filter; `skipme` is the SKIPME in force, `caller` the
    /// connection running the command.
    pub(super) fn matches(&self, s: &Session, now_ms: i64, caller: ConnId, skipme: bool) -> bool {
        self.addr.as_ref().is_none_or(|a| s.addr.as_bytes() == a)
            && self.laddr.as_ref().is_none_or(|a| s.laddr.as_bytes() == a)
            && self.ctype.is_none_or(|t| client_type(s) == t)
            && self.ids.as_ref().is_none_or(|ids| ids.contains(&s.id))
            && self.user.as_ref().is_none_or(|u| s.user == *u)
            && self
                .maxage
                .is_none_or(|age| (now_ms - s.created_ms).max(0) / 1000 >= age)
            && !(skipme && s.id == caller)
    }
}

/// The clients `filter` keeps, in id order (Valkey walks its client list, oldest first).
pub(super) fn matching(e: &Engine, call: &Call, filter: &Filter, skipme: bool) -> Vec<ConnId> {
    let mut ids: Vec<ConnId> = e
        .sessions
        .values()
        .filter(|s| filter.matches(s, e.now_ms, call.conn, skipme))
        .map(|s| s.id)
        .collect();
    ids.sort_unstable();
    ids
}
