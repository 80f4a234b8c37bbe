//! COMMAND INFO and COMMAND DOCS of every command and subcommand redlab implements, under
//! the valkey-8.1 profile, against a real valkey-server 8.1, byte for byte in RESP3 (where
//! sets, maps and simple strings show). The list is redlab's own COMMAND LIST, so a command
//! added later is compared without anyone listing it (tests/conformance/command.txt lists
//! them by hand for redis-server 7.0.15 and valkey-server 8.1).
//!
//! A container's own entry is compared without its subcommands (redlab implements only
//! some): each subcommand it has is compared on its own, as COMMAND LIST names it.

mod support;

use std::time::Duration;

use support::resp::{elements, show, RawConn};

const WAIT: Duration = Duration::from_secs(10);

/// A RESP3 connection.
fn connect(addr: std::net::SocketAddr) -> RawConn {
    let mut c = RawConn::connect(addr);
    c.send_strs(&["HELLO", "3"]);
    c.read_frame(WAIT).expect("HELLO 3");
    c
}

fn ask(c: &mut RawConn, args: &[&str]) -> Vec<u8> {
    c.send_strs(args);
    c.read_frame(WAIT)
        .unwrap_or_else(|| panic!("no answer to {args:?}"))
}

/// The text of a bulk-string frame.
fn bulk_text(frame: &[u8]) -> String {
    let start = frame
        .windows(2)
        .position(|w| w == b"\r\n")
        .expect("a header")
        + 2;
    String::from_utf8_lossy(&frame[start..frame.len() - 2]).into_owned()
}

/// COMMAND INFO's entry of one command without its tenth field (the subcommands).
fn info_without_subcommands(reply: &[u8]) -> Vec<Vec<u8>> {
    let (_, entries) = elements(reply).expect("an array");
    let (_, mut fields) = elements(&entries[0]).expect("an entry");
    fields.truncate(9);
    fields
}

/// COMMAND DOCS' entry of one command, without its `subcommands` pair.
fn docs_without_subcommands(reply: &[u8]) -> Vec<Vec<u8>> {
    let (_, pairs) = elements(reply).expect("a map");
    let (_, fields) = elements(&pairs[1]).expect("an entry");
    fields
        .chunks(2)
        .filter(|kv| bulk_text(&kv[0]) != "subcommands")
        .flatten()
        .cloned()
        .collect()
}

#[test]
fn every_command_is_described_as_valkey_server_8_1_describes_it() {
    let Some(valkey) = support::valkey_or_skip("command_meta_valkey") else {
        return;
    };
    let redlab = redlab::Server::builder()
        .compat(redlab::Profile::Valkey81)
        .start();
    let mut ours = connect(redlab.addr());
    let mut theirs = connect(valkey.addr());

    let (_, listed) = elements(&ask(&mut ours, &["COMMAND", "LIST"])).expect("an array");
    let names: Vec<String> = listed
        .iter()
        .map(|f| bulk_text(f))
        // redlab's own control commands, which no Redis or Valkey has.
        .filter(|n| !n.starts_with("redlab."))
        .collect();
    assert!(names.len() > 300, "COMMAND LIST gave {}", names.len());

    let mut differ = Vec::new();
    let (mut infos, mut docs) = (0, 0);
    for name in &names {
        let (a, b) = (
            ask(&mut ours, &["COMMAND", "INFO", name]),
            ask(&mut theirs, &["COMMAND", "INFO", name]),
        );
        infos += 1;
        if info_without_subcommands(&a) != info_without_subcommands(&b) {
            differ.push(format!(
                "COMMAND INFO {name}\n  redlab: {}\n  valkey: {}",
                show(&a),
                show(&b)
            ));
        }
        let (a, b) = (
            ask(&mut ours, &["COMMAND", "DOCS", name]),
            ask(&mut theirs, &["COMMAND", "DOCS", name]),
        );
        docs += 1;
        if docs_without_subcommands(&a) != docs_without_subcommands(&b) {
            differ.push(format!(
                "COMMAND DOCS {name}\n  redlab: {}\n  valkey: {}",
                show(&a),
                show(&b)
            ));
        }
    }
    eprintln!(
        "command_meta_valkey: {infos} COMMAND INFO and {docs} COMMAND DOCS compared with \
         valkey-server 8.1, {} differ",
        differ.len()
    );
    assert!(differ.is_empty(), "{}", differ.join("\n\n"));
}
