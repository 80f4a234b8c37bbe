//! `#!lua flags=...` (EVAL) and `#!lua name=...` (FUNCTION LOAD) first lines.

use crate::errors;
pub const NO_WRITES: u32 = 1 << 0;
pub const ALLOW_OOM: u32 = 1 << 1;
pub const ALLOW_STALE: u32 = 1 << 2;
pub const NO_CLUSTER: u32 = 1 << 3;
pub const ALLOW_CROSS_SLOT: u32 = 1 << 4;
/// No shebang: the script runs in Redis 6 compatibility mode (flags come from its commands).
pub const EVAL_COMPAT: u32 = 1 << 5;

/// The flag names in the order FUNCTION LIST prints them.
pub const NAMES: &[(u32, &str)] = &[
    (NO_WRITES, "no-writes"),
    (ALLOW_OOM, "allow-oom"),
    (ALLOW_STALE, "allow-stale"),
    (NO_CLUSTER, "no-cluster"),
    (ALLOW_CROSS_SLOT, "allow-cross-slot-keys"),
];

pub fn flag_by_name(name: &[u8]) -> Option<u32> {
    NAMES
        .iter()
        .find(|(_, n)| n.as_bytes() == name)
        .map(|(f, _)| *f)
}

/// Parses an EVAL script's shebang. Returns the flags and how many bytes of the body the
/// shebang line takes (the compiler gets the rest, from its newline, so lines still count
/// from 1).
///
/// As Redis's evalExtractShebangFlags: the first line is split like a command line
/// (`sdssplitargs`: blanks, quotes and escapes; an unbalanced quote is "Invalid engine"),
/// each option after the engine must be `flags=` with a comma-separated list (an empty list
/// is no flag, an empty name between commas is an unknown flag). Redis refuses any first
/// word but `#!lua` before reading the options; with `engines` (Valkey 8.1,
/// `since::VALKEY_SCRIPT_ENGINES`) the options are read first and the engine is then looked
/// up by name, case-insensitively.
pub fn parse_eval(body: &[u8], engines: bool) -> Result<(u32, usize), String> {
    if !body.starts_with(b"#!") {
        return Ok((EVAL_COMPAT, 0));
    }
    let Some(end) = body.iter().position(|&c| c == b'\n') else {
        return Err(errors::SHEBANG_INVALID.into());
    };
    let parts = match crate::net::parser::split_args(&body[..end]) {
        Some(parts) if !parts.is_empty() => parts,
        _ => return Err(errors::SHEBANG_ENGINE_INVALID.into()),
    };
    let engine = &parts[0];
    if !engines && engine.as_slice() != &b"#!lua"[..] {
        return Err(errors::shebang_engine(engine));
    }
    let mut flags = 0;
    for p in &parts[1..] {
        let Some(list) = p.strip_prefix(b"flags=") else {
            return Err(errors::shebang_option(p));
        };
        if list.is_empty() {
            continue;
        }
        for f in list.split(|&c| c == b',') {
            match flag_by_name(f) {
                Some(bit) => flags |= bit,
                None => return Err(errors::shebang_flag(f)),
            }
        }
    }
    let name = engine.get(2..).unwrap_or_default();
    if engines && !name.eq_ignore_ascii_case(b"lua") {
        return Err(errors::shebang_engine_valkey(name));
    }
    Ok((flags, end))
}

/// Parses a library's `#!lua name=<lib>` line; returns the library name. As Redis's
/// functionExtractLibMetaData: the first line must end with a newline and is split like a
/// command line (so `name="lib"` names `lib`), the metadata is checked before the engine,
/// and `name=` matches in any case.
pub fn parse_library(code: &[u8]) -> Result<String, String> {
    if !code.starts_with(b"#!") {
        return Err(errors::LIBRARY_METADATA_MISSING.into());
    }
    let Some(end) = code.iter().position(|&c| c == b'\n') else {
        return Err(errors::LIBRARY_METADATA_INVALID.into());
    };
    let parts = match crate::net::parser::split_args(&code[..end]) {
        Some(parts) if !parts.is_empty() => parts,
        _ => return Err(errors::LIBRARY_METADATA_INVALID.into()),
    };
    let mut name: Option<String> = None;
    for p in &parts[1..] {
        if p.len() < 5 || !p[..5].eq_ignore_ascii_case(b"name=") {
            return Err(errors::library_metadata_value(p));
        }
        if name.is_some() {
            return Err(errors::LIBRARY_METADATA_NAME_TWICE.into());
        }
        name = Some(String::from_utf8_lossy(&p[5..]).into_owned());
    }
    let Some(name) = name else {
        return Err(errors::LIBRARY_NAME_NOT_GIVEN.into());
    };
    let engine = &parts[0][2.min(parts[0].len())..];
    if !engine.eq_ignore_ascii_case(b"lua") {
        return Err(errors::engine_not_found(engine));
    }
    if name.is_empty() || !name.bytes().all(|c| c.is_ascii_alphanumeric() || c == b'_') {
        return Err(errors::library_name_invalid());
    }
    Ok(name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shebang_flags() {
        for engines in [false, true] {
            assert_eq!(parse_eval(b"return 1", engines).unwrap(), (EVAL_COMPAT, 0));
            assert_eq!(
                parse_eval(b"#!lua flags=no-writes,allow-oom\nreturn 1", engines).unwrap(),
                (NO_WRITES | ALLOW_OOM, 31)
            );
            assert!(parse_eval(b"#!lua", engines).is_err());
            assert_eq!(
                parse_eval(b"#!lua flags=x\n", engines).unwrap_err(),
                "ERR Unexpected flag in script shebang: x"
            );
        }
    }

    /// The line is split as Redis's sdssplitargs splits it (redis-server 7.0.15 and
    /// valkey-server 8.1 answer these alike).
    #[test]
    fn shebang_split_like_a_command_line() {
        for engines in [false, true] {
            let parse = |b: &[u8]| parse_eval(b, engines);
            assert_eq!(parse(b"#!lua\tflags=no-writes\n").unwrap().0, NO_WRITES);
            assert_eq!(parse(b"#!lua \"flags=no-writes\"\n").unwrap().0, NO_WRITES);
            assert_eq!(parse(b"#!lua flags=\n").unwrap().0, 0);
            assert_eq!(
                parse(b"#!lua flags=,,\n").unwrap_err(),
                "ERR Unexpected flag in script shebang: "
            );
            assert_eq!(
                parse(b"#!lua flags=no-writes,\n").unwrap_err(),
                "ERR Unexpected flag in script shebang: "
            );
            assert_eq!(
                parse(b"#!lua \"fl\n").unwrap_err(),
                "ERR Invalid engine in script shebang"
            );
        }
    }

    /// Redis refuses the engine first; Valkey 8.1 reads the options first and looks the
    /// engine up by name (as the two reference servers answer).
    #[test]
    fn shebang_engine_per_family() {
        assert_eq!(
            parse_eval(b"#!luajit\n", false).unwrap_err(),
            "ERR Unexpected engine in script shebang: #!luajit"
        );
        assert_eq!(
            parse_eval(b"#!luajit\n", true).unwrap_err(),
            "ERR Could not find scripting engine 'luajit'"
        );
        assert_eq!(
            parse_eval(b"#! lua\n", true).unwrap_err(),
            "ERR Unknown lua shebang option: lua"
        );
        assert_eq!(
            parse_eval(b"#!\n", true).unwrap_err(),
            "ERR Could not find scripting engine ''"
        );
        assert_eq!(
            parse_eval(b"#!LUA flags=no-writes\n", true).unwrap().0,
            NO_WRITES
        );
        assert_eq!(
            parse_eval(b"#!LUA\n", false).unwrap_err(),
            "ERR Unexpected engine in script shebang: #!LUA"
        );
    }
}
