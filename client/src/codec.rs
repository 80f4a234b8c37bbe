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

/// Decodes one reply from the front of `buf`; Ok(None) when it is not complete yet.
pub fn decode(buf: &mut BytesMut, resp: u8) -> Result<Option<Value>, Error> {
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
        Frame3::SimpleString { data, .. } => Value::Status(String::from_utf8_lossy(&data).into_owned()),
        Frame3::SimpleError { data, .. } => Value::error(&data),
        Frame3::BlobError { data, .. } => Value::error(&String::from_utf8_lossy(&data)),
        Frame3::Number { data, .. } => Value::Int(data),
        Frame3::Double { data, .. } => Value::Double(data),
        Frame3::Boolean { data, .. } => Value::Bool(data),
        Frame3::Null => Value::Nil,
        Frame3::BigNumber { data, .. } => Value::BigNumber(String::from_utf8_lossy(&data).into_owned()),
        Frame3::VerbatimString { data, format, .. } => {
            Value::Verbatim { format: format!("{:?}", format).to_lowercase(), text: Bytes::from(data) }
        }
        Frame3::Array { data, .. } => Value::Array(data.into_iter().map(from3).collect()),
        Frame3::Set { data, .. } => Value::Set(data.into_iter().map(from3).collect()),
        Frame3::Push { data, .. } => Value::Push(data.into_iter().map(from3).collect()),
        // redis-protocol builds its (insertion-ordered) map from the last pair to the first:
        // reversing restores the server's order, which replies like HGETALL rely on.
        Frame3::Map { data, .. } => Value::Map(data.into_iter().rev().map(|(k, v)| (from3(k), from3(v))).collect()),
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
        assert_eq!(v, Value::Array(vec![Value::Int(1), Value::Nil, Value::error("ERR no")]));
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
}
