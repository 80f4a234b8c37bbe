//! String commands.

use super::table::{flags::*, Command};
use crate::db::Value;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::notify;
use crate::reply::Reply;

fn get(e: &mut Engine, call: &mut Call) -> Reply {
    match e.db(call.db).get(call.arg(1)) {
        None => Reply::Nil,
        Some(entry) => match &entry.value {
            Value::Str(s) => Reply::bulk(s),
            _ => Reply::err(errors::WRONGTYPE),
        },
    }
}

fn set(e: &mut Engine, call: &mut Call) -> Reply {
    if call.argc() != 3 {
        return Reply::err(errors::SYNTAX);
    }
    let key = call.arg(1).to_vec();
    e.db(call.db).set(&key, Value::Str(call.arg(2).to_vec()));
    e.modified(call.db, &key, notify::STRING, "set");
    Reply::ok()
}

pub static COMMANDS: &[Command] = &[
    Command::new("get", 2, READONLY | FAST, "string", get).keys(1, 1, 1),
    Command::new("set", -3, WRITE | DENYOOM, "string", set).keys(1, 1, 1),
];
