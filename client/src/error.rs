//! One error type that keeps apart the three things a caller must treat differently.

use std::fmt;

/// Why a call did not produce the result it was for.
#[derive(Clone, Debug, PartialEq)]
pub enum Error {
    /// The server answered with an error reply (`WRONGTYPE ...`, `NOSCRIPT ...`, `BUSY ...`).
    /// A bug or an operational condition: the data model, the script or the server needs
    /// attention. `code` is the first word (`WRONGTYPE`), `message` the rest.
    Redis { code: String, message: String },
    /// The connection failed or closed: the command may or may not have run.
    Connection(String),
    /// The reply could not be decoded, or was not the shape the call expects.
    Protocol(String),
    /// A pattern script refused the input as invalid (its documented status 2 or an
    /// `ERR invalid-...` reply): nothing was written.
    Invalid(String),
}

impl Error {
    /// The error code of a Redis error reply.
    pub fn code(&self) -> Option<&str> {
        match self {
            Error::Redis { code, .. } => Some(code),
            _ => None,
        }
    }

    pub(crate) fn io(e: std::io::Error) -> Error {
        Error::Connection(e.to_string())
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Redis { code, message } => write!(f, "{} {}", code, message),
            Error::Connection(e) => write!(f, "connection failed: {}", e),
            Error::Protocol(e) => write!(f, "unexpected reply: {}", e),
            Error::Invalid(e) => write!(f, "invalid input: {}", e),
        }
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;
