//! A schedule: the sequence of choices the scheduler made, and its short string form.
//!
//! The string is what a failure prints and what a replay takes, so it is meant to be read
//! and typed by a person: `ABAB` is "A, B, A, B each send their next command";
//! `A+1500pB1500xAf0` mixes in a clock advance of 1500 ms, a 1500 ms pause of B, a crash
//! of A and the first declared fault; `t` lets virtual time run to the next timer, and
//! `dA200` runs A's next command with its reply delayed by 200 ms; with a replica, `r`
//! delivers the next unit of the replication stream and `^` fails over to the replica. Clients are letters by declaration order (A = the
//! first client, whatever its name).

use std::fmt;

/// One scheduling decision.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Choice {
    /// The client (by index) sends its next command, or the next command of its pipeline.
    Run(u8),
    /// The server clock moves forward this many milliseconds.
    Advance(u32),
    /// The client is not scheduled until this much server time has passed (a GC pause).
    Pause(u8, u32),
    /// The client stops for good: its connection closes, it is never scheduled again.
    Crash(u8),
    /// The scenario's fault rule with this index is added to the server.
    Fault(u8),
    /// Virtual time runs on to the next timed event — a client's timer (a
    /// `tokio::time::sleep`, a `timeout`, an `interval` tick), a delayed reply or the end of
    /// a pause — and it fires. The server clock moves with it.
    Timer,
    /// The client's next command runs on the server now, but its reply reaches the client
    /// only after this many milliseconds (a slow network): its timeouts may fire first.
    Delay(u8, u32),
    /// The replica applies the oldest unit of the primary's replication stream it has not
    /// received yet (a scenario with `Scenario::replica`).
    Replicate,
    /// The replica is promoted and the clients move to it; whatever of the stream it had not
    /// received is lost (`Scenario::failover`).
    Failover,
}

impl Choice {
    /// Whether this is a client's command rather than an event.
    pub fn is_run(&self) -> bool {
        matches!(self, Choice::Run(_))
    }
}

/// The letter of client `i` in a schedule string.
pub fn client_letter(i: usize) -> char {
    (b'A' + (i as u8 % 26)) as char
}

/// A sequence of choices; `Display` and `FromStr` give its string form.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct Schedule(pub Vec<Choice>);

impl Schedule {
    pub fn choices(&self) -> &[Choice] {
        &self.0
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// Client commands in the schedule (events excluded).
    pub fn commands(&self) -> usize {
        self.0.iter().filter(|c| c.is_run()).count()
    }

    /// Times the running client changes between two consecutive commands.
    pub fn switches(&self) -> usize {
        let mut last = None;
        let mut n = 0;
        for c in &self.0 {
            if let Choice::Run(i) = c {
                if last.is_some_and(|l| l != *i) {
                    n += 1;
                }
                last = Some(*i);
            }
        }
        n
    }
}

impl fmt::Display for Schedule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for c in &self.0 {
            match *c {
                Choice::Run(i) => write!(f, "{}", client_letter(i as usize))?,
                Choice::Advance(ms) => write!(f, "+{}", ms)?,
                Choice::Pause(i, ms) => write!(f, "p{}{}", client_letter(i as usize), ms)?,
                Choice::Crash(i) => write!(f, "x{}", client_letter(i as usize))?,
                Choice::Fault(j) => write!(f, "f{}", j)?,
                Choice::Timer => write!(f, "t")?,
                Choice::Delay(i, ms) => write!(f, "d{}{}", client_letter(i as usize), ms)?,
                Choice::Replicate => write!(f, "r")?,
                Choice::Failover => write!(f, "^")?,
            }
        }
        Ok(())
    }
}

/// Why a schedule string did not parse.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError(pub String);

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "bad schedule string: {}", self.0)
    }
}

impl std::error::Error for ParseError {}

impl std::str::FromStr for Schedule {
    type Err = ParseError;

    fn from_str(s: &str) -> Result<Schedule, ParseError> {
        let b = s.as_bytes();
        let mut i = 0;
        let mut out = Vec::new();
        let number = |i: &mut usize| -> Result<u32, ParseError> {
            let start = *i;
            while *i < b.len() && b[*i].is_ascii_digit() {
                *i += 1;
            }
            s[start..*i]
                .parse()
                .map_err(|_| ParseError(format!("expected a number at {} in {:?}", start, s)))
        };
        let letter = |i: &mut usize| -> Result<u8, ParseError> {
            match b.get(*i) {
                Some(c) if c.is_ascii_uppercase() => {
                    *i += 1;
                    Ok(c - b'A')
                }
                _ => Err(ParseError(format!(
                    "expected a client letter at {} in {:?}",
                    *i, s
                ))),
            }
        };
        while i < b.len() {
            let c = b[i];
            match c {
                b' ' | b'.' | b',' => i += 1,
                b'A'..=b'Z' => out.push(Choice::Run(letter(&mut i)?)),
                b'+' => {
                    i += 1;
                    out.push(Choice::Advance(number(&mut i)?));
                }
                b'p' => {
                    i += 1;
                    let c = letter(&mut i)?;
                    out.push(Choice::Pause(c, number(&mut i)?));
                }
                b'x' => {
                    i += 1;
                    out.push(Choice::Crash(letter(&mut i)?));
                }
                b't' => {
                    i += 1;
                    out.push(Choice::Timer);
                }
                b'r' => {
                    i += 1;
                    out.push(Choice::Replicate);
                }
                b'^' => {
                    i += 1;
                    out.push(Choice::Failover);
                }
                b'd' => {
                    i += 1;
                    let c = letter(&mut i)?;
                    out.push(Choice::Delay(c, number(&mut i)?));
                }
                b'f' => {
                    i += 1;
                    let n = number(&mut i)?;
                    out.push(Choice::Fault(u8::try_from(n).map_err(|_| {
                        ParseError(format!("fault index {} too large", n))
                    })?));
                }
                _ => {
                    return Err(ParseError(format!(
                        "unexpected {:?} at {} in {:?}",
                        c as char, i, s
                    )))
                }
            }
        }
        Ok(Schedule(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_every_choice() {
        let s = Schedule(vec![
            Choice::Run(0),
            Choice::Run(1),
            Choice::Advance(1500),
            Choice::Pause(1, 200),
            Choice::Crash(0),
            Choice::Fault(3),
            Choice::Run(2),
            Choice::Timer,
            Choice::Delay(1, 250),
            Choice::Replicate,
            Choice::Failover,
        ]);
        let text = s.to_string();
        assert_eq!(text, "AB+1500pB200xAf3CtdB250r^");
        assert_eq!(text.parse::<Schedule>().unwrap(), s);
        assert_eq!(
            "A B . A,B".parse::<Schedule>().unwrap().to_string(),
            "ABAB",
            "separators are ignored"
        );
        assert!("A?".parse::<Schedule>().is_err());
        assert!("p1".parse::<Schedule>().is_err());
    }

    #[test]
    fn counts_switches() {
        let s: Schedule = "AB+10ABB".parse().unwrap();
        assert_eq!(s.switches(), 3);
        assert_eq!(s.commands(), 5);
    }
}
