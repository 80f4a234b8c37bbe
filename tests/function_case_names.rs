//! FCALL when one library registered functions whose names differ only in case (`foo`,
//! `FOO`, `Foo`). Redis 7.0.15 and Valkey 8.1 keep a library's functions in a dictionary that
//! compares names exactly, and all functions in one that ignores case: adding the library
//! puts in the first name met in the library's own hash order and drops the others, so FCALL
//! under any case runs that one. That order follows the process's random hash seed (over
//! six starts each, redis-server 7.0.15 ran `FOO` five times and valkey-server 8.1 four), so
//! no case file can name the winner; what holds in every run is that FCALL runs the function
//! FUNCTION LIST shows first. redlab lists a library's functions in the order they were
//! registered and runs the first, so the same rule holds there, the same way every time.

mod support;

use std::net::SocketAddr;
use std::time::Duration;

use redlab::Profile;
use redlab_client::RealRedis;
use support::resp::RawConn;

const WAIT: Duration = Duration::from_secs(10);
const NAMES: [&str; 3] = ["foo", "FOO", "Foo"];

/// A library registering `names` in that order, each function answering its own name.
fn library(names: &[&str]) -> String {
    let mut code = String::from("#!lua name=caselib\n");
    for n in names {
        code.push_str(&format!(
            "redis.register_function('{n}', function() return '{n}' end)\n"
        ));
    }
    code
}

/// Loads the library on `addr` and checks that FCALL, under any case, runs the function
/// FUNCTION LIST shows first; returns that function's name.
fn fcall_runs_the_first_listed(addr: SocketAddr, who: &str, names: &[&str]) -> String {
    let mut c = RawConn::connect(addr);
    assert_eq!(c.call(&["FUNCTION", "FLUSH"], WAIT), "+OK\\r\\n", "{who}");
    let loaded = c.call(&["FUNCTION", "LOAD", &library(names)], WAIT);
    assert_eq!(loaded, "$7\\r\\ncaselib\\r\\n", "{who}");
    let list = c.call(&["FUNCTION", "LIST"], WAIT);
    let first = *NAMES
        .iter()
        .filter_map(|n| list.find(&format!("\\r\\n{n}\\r\\n")).map(|at| (at, n)))
        .min()
        .unwrap_or_else(|| panic!("{who}: no function in {list}"))
        .1;
    for called in ["foo", "FOO", "Foo", "fOO"] {
        assert_eq!(
            c.call(&["FCALL", called, "0"], WAIT),
            format!("$3\\r\\n{first}\\r\\n"),
            "{who}: FCALL {called} with {list}"
        );
    }
    // FLUSH frees such a library safely; DELETE aborts both real servers (DIFFERENCES.md).
    assert_eq!(c.call(&["FUNCTION", "FLUSH"], WAIT), "+OK\\r\\n", "{who}");
    first.to_string()
}

#[test]
fn fcall_runs_the_function_function_list_shows_first() {
    let orders: [&[&str]; 2] = [&NAMES, &["FOO", "Foo", "foo"]];
    // The rule, as the real servers follow it.
    if let Some(real) =
        RealRedis::start_or_skip("fcall_runs_the_function_function_list_shows_first")
    {
        for names in orders {
            fcall_runs_the_first_listed(real.addr(), "redis-server 7.0.15", names);
        }
    }
    if let Some(valkey) =
        support::valkey_or_skip("fcall_runs_the_function_function_list_shows_first")
    {
        for names in orders {
            fcall_runs_the_first_listed(valkey.addr(), "valkey-server 8.1", names);
        }
    }
    // redlab under every profile: the rule, with the first registered listed first.
    for p in Profile::ALL {
        let server = redlab::Server::builder().compat(p).start();
        for names in orders {
            let ran = fcall_runs_the_first_listed(server.addr(), p.name(), names);
            assert_eq!(ran, names[0], "{p}");
        }
    }
}
