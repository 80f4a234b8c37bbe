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
pub fn parse_eval(body: &[u8]) -> Result<(u32, usize), String> {
    if !body.starts_with(b"#!") {
        return Ok((EVAL_COMPAT, 0));
    }
    let Some(end) = body.iter().position(|&c| c == b'\n') else {
        return Err(errors::SHEBANG_INVALID.into());
    };
    let line = &body[..end];
    let mut parts = line.split(|&c| c == b' ').filter(|p| !p.is_empty());
    let engine = parts.next().unwrap_or_default();
    if engine != b"#!lua" {
        return Err(errors::shebang_engine(engine));
    }
    let mut flags = 0;
    for p in parts {
        let Some(list) = p.strip_prefix(b"flags=") else {
            return Err(errors::shebang_option(p));
        };
        for f in list.split(|&c| c == b',').filter(|f| !f.is_empty()) {
            match flag_by_name(f) {
                Some(bit) => flags |= bit,
                None => return Err(errors::shebang_flag(f)),
            }
        }
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
        assert_eq!(parse_eval(b"return 1").unwrap(), (EVAL_COMPAT, 0));
        assert_eq!(
            parse_eval(b"#!lua flags=no-writes,allow-oom\nreturn 1").unwrap(),
            (NO_WRITES | ALLOW_OOM, 31)
        );
        assert!(parse_eval(b"#!lua").is_err());
        assert_eq!(
            parse_eval(b"#!lua flags=x\n").unwrap_err(),
            "ERR Unexpected flag in script shebang: x"
        );
    }
}
