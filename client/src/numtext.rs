//! Decimal text of an integer in a buffer on the stack, for command arguments.
//!
//! Patterns format ids and counts into every command they send (`EVALSHA sha 2 k d 150`);
//! under the explorer, which replays each client's commands for every schedule, a `String`
//! per number was an allocation and a free per command.

/// Room for any u64 or i64 in decimal.
pub(crate) struct NumText {
    buf: [u8; 20],
}

impl NumText {
    pub(crate) fn new() -> NumText {
        NumText { buf: [0; 20] }
    }

    /// `n` in decimal.
    pub(crate) fn u64(&mut self, mut n: u64) -> &[u8] {
        let mut at = self.buf.len();
        loop {
            at -= 1;
            self.buf[at] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                return &self.buf[at..];
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::NumText;

    #[test]
    fn writes_what_to_string_writes() {
        for n in [0, 7, 10, 150, 99_999, u64::MAX] {
            assert_eq!(NumText::new().u64(n), n.to_string().as_bytes());
        }
    }
}
