//! The value types and the encodings OBJECT ENCODING reports for them.

use std::collections::VecDeque;

use super::stream::Stream;
use super::strvalue::StrValue;
use super::zset_value::ZSet;

pub use super::hash::HashValue;
pub use super::set::SetValue;
pub type ListValue = VecDeque<Vec<u8>>;

/// The collections are boxed: a `Value` is 24 bytes, a short string's inline bytes, so a
/// string key costs no more than it must (memory per key at most Redis's, issue 17).
#[derive(Clone, Debug)]
pub enum Value {
    Str(StrValue),
    List(Box<ListValue>),
    Hash(HashValue),
    Set(SetValue),
    ZSet(ZSet),
    Stream(Box<Stream>),
}

impl Value {
    /// The name TYPE replies with.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::Str(_) => "string",
            Value::List(_) => "list",
            Value::Hash(_) => "hash",
            Value::Set(_) => "set",
            Value::ZSet(_) => "zset",
            Value::Stream(_) => "stream",
        }
    }

    /// A rough count of the bytes this value holds, for INFO used_memory and maxmemory.
    pub fn approx_size(&self) -> usize {
        match self {
            Value::Str(s) => s.len() + 16,
            Value::List(l) => l.iter().map(|e| e.len() + 11).sum::<usize>() + 32,
            Value::Hash(h) => h.approx_size(),
            Value::Set(s) => s.approx_size(),
            Value::ZSet(z) => z.approx_size(),
            Value::Stream(s) => s.approx_size(),
        }
    }

    /// Puts a value read from a payload into the form Redis's loader would choose for it
    /// from its contents and the limits (a small hash, set or sorted set is packed).
    pub fn fit_loaded(&mut self, l: &super::encoding::Limits) {
        match self {
            Value::Hash(h) => h.fit(l),
            Value::Set(s) => s.fit(l),
            Value::ZSet(z) => z.fit_encoding(l),
            _ => {}
        }
    }

    /// Whether a collection has become empty (Redis deletes empty collections).
    pub fn is_empty_collection(&self) -> bool {
        match self {
            Value::Str(_) => false,
            Value::List(l) => l.is_empty(),
            Value::Hash(h) => h.is_empty(),
            Value::Set(s) => s.is_empty(),
            Value::ZSet(z) => z.is_empty(),
            // An empty stream is a value of its own (XGROUP CREATE MKSTREAM, XDEL, XTRIM).
            Value::Stream(_) => false,
        }
    }
}

/// A type a key's value can hold, so one generic lookup (`cmd::lookup`) serves every
/// command family: it answers WRONGTYPE when the key holds another type.
pub trait ValueType {
    /// The value as this type, or None when it holds another.
    fn of(v: &Value) -> Option<&Self>;
    fn of_mut(v: &mut Value) -> Option<&mut Self>;
}

macro_rules! value_type {
    ($t:ty, $variant:ident) => {
        impl ValueType for $t {
            fn of(v: &Value) -> Option<&Self> {
                match v {
                    Value::$variant(x) => Some(x),
                    _ => None,
                }
            }
            fn of_mut(v: &mut Value) -> Option<&mut Self> {
                match v {
                    Value::$variant(x) => Some(x),
                    _ => None,
                }
            }
        }
    };
}

value_type!(StrValue, Str);
value_type!(ListValue, List);
value_type!(HashValue, Hash);
value_type!(SetValue, Set);
value_type!(ZSet, ZSet);
value_type!(Stream, Stream);
