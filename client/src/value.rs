//! `Value`: a reply as the client sees it, RESP2 and RESP3 alike.

use bytes::Bytes;

use crate::error::Error;

/// A decoded reply.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Nil,
    Int(i64),
    Bulk(Bytes),
    /// A status reply (`+OK`).
    Status(String),
    /// An error reply inside a pipeline or transaction result; a single command's error
    /// becomes `Err(Error::Redis)` instead.
    Error {
        code: String,
        message: String,
    },
    Array(Vec<Value>),
    Map(Vec<(Value, Value)>),
    Set(Vec<Value>),
    Double(f64),
    Bool(bool),
    BigNumber(String),
    Verbatim {
        format: String,
        text: Bytes,
    },
    Push(Vec<Value>),
}

impl Value {
    /// An error reply `-CODE message` split into its code and message.
    pub fn error(text: &str) -> Value {
        let (code, message) = text.split_once(' ').unwrap_or((text, ""));
        Value::Error {
            code: code.to_string(),
            message: message.to_string(),
        }
    }

    /// Turns an error reply into `Err`, anything else into `Ok`.
    pub fn into_result(self) -> Result<Value, Error> {
        match self {
            Value::Error { code, message } => Err(Error::Redis { code, message }),
            v => Ok(v),
        }
    }

    pub fn as_int(&self) -> Option<i64> {
        match self {
            Value::Int(n) => Some(*n),
            Value::Bulk(b) => std::str::from_utf8(b).ok()?.parse().ok(),
            Value::Status(s) => s.parse().ok(),
            _ => None,
        }
    }

    pub fn as_bytes(&self) -> Option<&[u8]> {
        match self {
            Value::Bulk(b) => Some(b),
            Value::Status(s) => Some(s.as_bytes()),
            Value::Verbatim { text, .. } => Some(text),
            _ => None,
        }
    }

    pub fn as_str(&self) -> Option<&str> {
        self.as_bytes().and_then(|b| std::str::from_utf8(b).ok())
    }

    pub fn is_nil(&self) -> bool {
        matches!(self, Value::Nil)
    }

    /// The elements of an array, set or push reply.
    pub fn as_array(&self) -> Option<&[Value]> {
        match self {
            Value::Array(v) | Value::Set(v) | Value::Push(v) => Some(v),
            _ => None,
        }
    }
}
