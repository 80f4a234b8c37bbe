//! Request encoding and reply decoding. Replies come from a trusted server, so the general
//! decoder of redis-protocol fits here (unlike the server's request parser).

use bytes::{Bytes, BytesMut};
use redis_protocol::resp2::types::OwnedFrame as Frame2;
use redis_protocol::resp3::types::OwnedFrame as Frame3;

use crate::error::Error;
use crate::value::Value;

/// Appends one command as a RESP array of bulk strings.
pub fn encode_command(args: &[Vec<u8>], out: &mut BytesMut) {
    out.extend_from_slice(format!("*{}\r\n", args.len()).as_bytes());
    for a in args {
        out.extend_from_slice(format!("${}\r\n", a.len()).as_bytes());
        out.extend_from_slice(a);
        out.extend_from_slice(b"\r\n");
    }
}

/// Deepest reply nesting accepted. redis-protocol's decoder (and the conversion below)
/// recurse once per level (kilobytes of stack each: 1,000 levels overflow a 2 MB test
/// thread), so a deeper frame would overflow the stack (found by the
/// `resp_decode` fuzz target); it is refused as a protocol error instead.
pub const MAX_NESTING: usize = 256;

/// Decodes one reply from the front of `buf`; Ok(None) when it is not complete yet.
pub fn decode(buf: &mut BytesMut, resp: u8) -> Result<Option<Value>, Error> {
    if nested_deeper_than(buf, MAX_NESTING) {
        return Err(Error::Protocol(format!(
            "reply nested deeper than {} levels",
            MAX_NESTING
        )));
    }
    if resp >= 3 {
        match redis_protocol::resp3::decode::complete::decode(buf) {
            Ok(Some((frame, n))) => {
                let _ = buf.split_to(n);
                Ok(Some(from3(frame)))
            }
            Ok(None) => Ok(None),
            Err(e) => Err(Error::Protocol(e.to_string())),
        }
    } else {
        match redis_protocol::resp2::decode::decode(buf) {
            Ok(Some((frame, n))) => {
                let _ = buf.split_to(n);
                Ok(Some(from2(frame)))
            }
            Ok(None) => Ok(None),
            Err(e) => Err(Error::Protocol(e.to_string())),
        }
    }
}

/// Walks the first frame's headers without recursion and says whether its aggregates nest
/// deeper than `max`. An incomplete or malformed frame is left to the decoder.
fn nested_deeper_than(b: &[u8], max: usize) -> bool {
    if !matches!(b.first(), Some(b'*' | b'~' | b'>' | b'%' | b'|')) {
        return false;
    }
    // Elements still expected by each open aggregate.
    let mut open: Vec<i64> = Vec::new();
    let mut pos = 0;
    loop {
        let Some(end) = b[pos..]
            .windows(2)
            .position(|w| w == b"\r\n")
            .map(|e| pos + e)
        else {
            return false;
        };
        if end == pos {
            // An empty line is malformed: the decoder reports it.
            return false;
        }
        let kind = b[pos];
        let n = std::str::from_utf8(&b[pos + 1..end])
            .ok()
            .and_then(|t| t.parse::<i64>().ok());
        pos = end + 2;
        match (kind, n) {
            (b'*' | b'~' | b'>', Some(n)) if n > 0 => open.push(n),
            (b'%', Some(n)) if n > 0 => open.push(n.saturating_mul(2)),
            // An attribute's pairs, then the reply it annotates: one element of the parent.
            (b'|', Some(n)) if n >= 0 => open.push(n.saturating_mul(2).saturating_add(1)),
            (b'$' | b'=' | b'!', Some(n)) if n >= 0 => {
                pos = pos.saturating_add(n as usize).saturating_add(2);
                if pos > b.len() {
                    return false;
                }
                if !close_one(&mut open) {
                    return false;
                }
                continue;
            }
            (b'$', None) => return false, // streamed string: not nested
            _ => {
                if !close_one(&mut open) {
                    return false;
                }
                continue;
            }
        }
        if open.len() > max {
            return true;
        }
    }
}

/// One element finished: counts it against the open aggregates, closing those it completes.
/// Returns false once the outermost frame is complete.
fn close_one(open: &mut Vec<i64>) -> bool {
    while let Some(top) = open.last_mut() {
        *top -= 1;
        if *top > 0 {
            return true;
        }
        open.pop();
    }
    false
}

fn from2(f: Frame2) -> Value {
    match f {
        Frame2::SimpleString(s) => Value::Status(String::from_utf8_lossy(&s).into_owned()),
        Frame2::Error(e) => Value::error(&e),
        Frame2::Integer(n) => Value::Int(n),
        Frame2::BulkString(b) => Value::Bulk(Bytes::from(b)),
        Frame2::Array(items) => Value::Array(items.into_iter().map(from2).collect()),
        Frame2::Null => Value::Nil,
    }
}

fn from3(f: Frame3) -> Value {
    match f {
        Frame3::BlobString { data, .. } => Value::Bulk(Bytes::from(data)),
        Frame3::SimpleString { data, .. } => {
            Value::Status(String::from_utf8_lossy(&data).into_owned())
        }
        Frame3::SimpleError { data, .. } => Value::error(&data),
        Frame3::BlobError { data, .. } => Value::error(&String::from_utf8_lossy(&data)),
        Frame3::Number { data, .. } => Value::Int(data),
        Frame3::Double { data, .. } => Value::Double(data),
        Frame3::Boolean { data, .. } => Value::Bool(data),
        Frame3::Null => Value::Nil,
        Frame3::BigNumber { data, .. } => {
            Value::BigNumber(String::from_utf8_lossy(&data).into_owned())
        }
        Frame3::VerbatimString { data, format, .. } => Value::Verbatim {
            format: format!("{:?}", format).to_lowercase(),
            text: Bytes::from(data),
        },
        Frame3::Array { data, .. } => Value::Array(data.into_iter().map(from3).collect()),
        Frame3::Set { data, .. } => Value::Set(data.into_iter().map(from3).collect()),
        Frame3::Push { data, .. } => Value::Push(data.into_iter().map(from3).collect()),
        // redis-protocol builds its (insertion-ordered) map from the last pair to the first:
        // reversing restores the server's order, which replies like HGETALL rely on.
        Frame3::Map { data, .. } => Value::Map(
            data.into_iter()
                .rev()
                .map(|(k, v)| (from3(k), from3(v)))
                .collect(),
        ),
        Frame3::Hello { .. } | Frame3::ChunkedString(_) => Value::Nil,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decodes_both_protocols() {
        let mut b = BytesMut::from(&b"*3\r\n:1\r\n$-1\r\n-ERR no\r\n"[..]);
        let v = decode(&mut b, 2).unwrap().unwrap();
        assert_eq!(
            v,
            Value::Array(vec![Value::Int(1), Value::Nil, Value::error("ERR no")])
        );
        let mut b = BytesMut::from(&b"%2\r\n+b\r\n,1.5\r\n+a\r\n#t\r\n"[..]);
        let v = decode(&mut b, 3).unwrap().unwrap();
        assert_eq!(
            v,
            Value::Map(vec![
                (Value::Status("b".into()), Value::Double(1.5)),
                (Value::Status("a".into()), Value::Bool(true))
            ]),
            "map order is kept"
        );
        let mut partial = BytesMut::from(&b"$5\r\nhel"[..]);
        assert_eq!(decode(&mut partial, 2).unwrap(), None);
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_stack_overflow() {
        let mut deep = BytesMut::from(&b"*1\r\n".repeat(100_000)[..]);
        deep.extend_from_slice(b":1\r\n");
        assert!(decode(&mut deep.clone(), 2).is_err());
        assert!(decode(&mut deep, 3).is_err());
        let mut ok = BytesMut::from(&b"*1\r\n".repeat(MAX_NESTING - 1)[..]);
        ok.extend_from_slice(b"%1\r\n$1\r\na\r\n:2\r\n");
        assert!(
            decode(&mut ok, 3).unwrap().is_some(),
            "{} levels decode",
            MAX_NESTING
        );
    }
}
