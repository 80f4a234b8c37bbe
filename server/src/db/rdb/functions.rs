//! FUNCTION DUMP/RESTORE payloads: each library as the function opcode and its code as an RDB
//! string, then the same footer as a key's DUMP payload (RDB version and CRC-64).
//!
//! Redis writes the code with `rdbSaveRawString`, so a long library is LZF-compressed exactly
//! as a long string value is; both directions therefore go through this module's codec.

use super::reader::Reader;
use super::{crc64, verify, write_string, RestoreError, RDB_VERSION};

/// `RDB_OPCODE_FUNCTION2`: one library (its code) follows.
const OPCODE_FUNCTION2: u8 = 245;

/// Why a FUNCTION RESTORE payload was refused.
#[derive(Debug, PartialEq, Eq)]
pub enum FunctionRestoreError {
    /// The footer: "ERR DUMP payload version or checksum are wrong".
    VersionOrChecksum,
    /// An entry that is not a library: "ERR given type is not a function".
    NotAFunction,
    /// A library whose code cannot be read: "ERR Bad data format".
    BadFormat,
}

/// The FUNCTION DUMP payload of libraries with these codes, in this order.
pub fn dump_functions<'a>(codes: impl IntoIterator<Item = &'a [u8]>) -> Vec<u8> {
    let mut out = Vec::new();
    for code in codes {
        out.push(OPCODE_FUNCTION2);
        write_string(&mut out, code);
    }
    out.extend_from_slice(&RDB_VERSION.to_le_bytes());
    let crc = crc64::crc64(0, &out);
    out.extend_from_slice(&crc.to_le_bytes());
    out
}

/// The library codes of a FUNCTION DUMP payload, in payload order.
pub fn restore_functions(payload: &[u8]) -> Result<Vec<Vec<u8>>, FunctionRestoreError> {
    let body = verify(payload).map_err(|e| match e {
        RestoreError::VersionOrChecksum => FunctionRestoreError::VersionOrChecksum,
        RestoreError::BadFormat => FunctionRestoreError::BadFormat,
    })?;
    let mut r = Reader::new(body);
    let mut codes = Vec::new();
    while !r.at_end() {
        if r.byte() != Some(OPCODE_FUNCTION2) {
            return Err(FunctionRestoreError::NotAFunction);
        }
        codes.push(r.string().ok_or(FunctionRestoreError::BadFormat)?);
    }
    Ok(codes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_round_trip_short_and_compressed() {
        let short = b"#!lua name=a\n".to_vec();
        let long = b"#!lua name=b\n".repeat(20);
        let payload = dump_functions([&short[..], &long[..]]);
        // The long library is LZF-compressed, as Redis writes it.
        assert!(payload.len() < long.len());
        assert_eq!(restore_functions(&payload), Ok(vec![short, long]));
    }

    #[test]
    fn a_zero_checksum_is_refused_as_redis_does() {
        let mut payload = dump_functions([&b"#!lua name=a\n"[..]]);
        let n = payload.len();
        payload[n - 8..].fill(0);
        assert_eq!(
            restore_functions(&payload),
            Err(FunctionRestoreError::VersionOrChecksum)
        );
    }

    #[test]
    fn a_key_payload_is_not_a_function() {
        let payload = super::super::dump(
            &crate::db::Value::Str(b"x".to_vec().into()),
            &Default::default(),
        );
        assert_eq!(
            restore_functions(&payload),
            Err(FunctionRestoreError::NotAFunction)
        );
    }
}
