//! Redis's argument specifications (COMMAND DOCS), read from the compact text form that
//! `scripts/capture_command_args.py` writes to `tests/data/command_args.txt`. The
//! differential fuzzer walks them to build commands Redis would mostly accept, so the
//! comparison reaches past the arity and syntax checks into the handlers.

/// One command or subcommand ("config|get").
#[derive(Debug, Clone)]
pub struct CommandSpec {
    pub name: String,
    pub arity: i32,
    pub flags: Vec<String>,
    pub args: Vec<Arg>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Repeat {
    Once,
    /// One or more.
    Multiple,
    /// One or more, the token repeated before each (SORT's GET pattern GET pattern).
    MultipleToken,
}

#[derive(Debug, Clone)]
pub struct Arg {
    pub optional: bool,
    pub repeat: Repeat,
    pub token: Option<String>,
    pub kind: Kind,
}

#[derive(Debug, Clone)]
pub enum Kind {
    /// A pure token: only `token` is sent.
    Pure,
    Key(String),
    Str(String),
    Int(String),
    Double(String),
    Pattern(String),
    UnixTime(String),
    OneOf(Vec<Arg>),
    Block(Vec<Arg>),
}

impl Kind {
    /// The argument's name in COMMAND DOCS ("numkeys", "timeout"), for the leaf types.
    pub fn name(&self) -> &str {
        match self {
            Kind::Key(n)
            | Kind::Str(n)
            | Kind::Int(n)
            | Kind::Double(n)
            | Kind::Pattern(n)
            | Kind::UnixTime(n) => n,
            _ => "",
        }
    }
}

/// Parses the whole file; a line that does not parse is a bug in the capture script, so it
/// is reported with its text.
pub fn parse(text: &str) -> Result<Vec<CommandSpec>, String> {
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with('#') || line.trim().is_empty() {
            continue;
        }
        out.push(parse_line(line).map_err(|e| format!("{e} in {line:?}"))?);
    }
    Ok(out)
}

fn parse_line(line: &str) -> Result<CommandSpec, String> {
    let (head, args) = line.split_once(" | ").ok_or("no ` | `")?;
    let mut head = head.split(' ');
    let name = head.next().ok_or("no name")?.to_string();
    let arity = head
        .next()
        .ok_or("no arity")?
        .parse()
        .map_err(|_| "bad arity")?;
    let flags = match head.next().ok_or("no flags")? {
        "-" => Vec::new(),
        f => f.split(',').map(String::from).collect(),
    };
    let mut p = Parser {
        s: args.as_bytes(),
        pos: 0,
    };
    let args = p.seq(None)?;
    if p.pos != p.s.len() {
        return Err(format!("trailing text at {}", p.pos));
    }
    Ok(CommandSpec {
        name,
        arity,
        flags,
        args,
    })
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn peek(&self) -> Option<u8> {
        self.s.get(self.pos).copied()
    }

    fn eat(&mut self, c: u8) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    /// Arguments separated by `sep` (space in a block or at top level, `|` in a one-of),
    /// up to `end` or the end of the text.
    fn seq(&mut self, end: Option<u8>) -> Result<Vec<Arg>, String> {
        let sep = if end == Some(b')') { b'|' } else { b' ' };
        let mut out = Vec::new();
        loop {
            if self.peek() == end {
                if end.is_some() {
                    self.pos += 1;
                }
                return Ok(out);
            }
            if !out.is_empty() && !self.eat(sep) {
                return Err(format!("expected {:?} at {}", sep as char, self.pos));
            }
            out.push(self.arg()?);
        }
    }

    fn arg(&mut self) -> Result<Arg, String> {
        let optional = self.eat(b'?');
        let (token, kind) = if self.eat(b'=') {
            (Some(self.word()?), Kind::Pure)
        } else {
            let start = self.pos;
            let first = self.word_or_group()?;
            match first {
                Ok(word) if self.eat(b'=') => {
                    let kind = match self.word_or_group()? {
                        Ok(t) => leaf(&t)?,
                        Err(k) => k,
                    };
                    (Some(word), kind)
                }
                Ok(word) => (None, leaf(&word).map_err(|e| format!("{e} at {start}"))?),
                Err(k) => (None, k),
            }
        };
        let repeat = if self.eat(b'*') {
            if self.eat(b'*') {
                Repeat::MultipleToken
            } else {
                Repeat::Multiple
            }
        } else {
            Repeat::Once
        };
        Ok(Arg {
            optional,
            repeat,
            token,
            kind,
        })
    }

    /// A bare or quoted word (Ok), or a parenthesised one-of / braced block (Err).
    fn word_or_group(&mut self) -> Result<Result<String, Kind>, String> {
        if self.eat(b'(') {
            return Ok(Err(Kind::OneOf(self.seq(Some(b')'))?)));
        }
        if self.eat(b'{') {
            return Ok(Err(Kind::Block(self.seq(Some(b'}'))?)));
        }
        self.word().map(Ok)
    }

    fn word(&mut self) -> Result<String, String> {
        if self.eat(b'"') {
            let start = self.pos;
            while self.peek().is_some_and(|c| c != b'"') {
                self.pos += 1;
            }
            let w = String::from_utf8_lossy(&self.s[start..self.pos]).into_owned();
            return if self.eat(b'"') {
                Ok(w)
            } else {
                Err("unclosed quote".into())
            };
        }
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || b"_#.-@".contains(&c))
        {
            self.pos += 1;
        }
        if start == self.pos {
            return Err(format!("expected a word at {}", self.pos));
        }
        Ok(String::from_utf8_lossy(&self.s[start..self.pos]).into_owned())
    }
}

fn leaf(word: &str) -> Result<Kind, String> {
    let (ty, name) = word
        .split_once('@')
        .ok_or_else(|| format!("{word:?} is no type@name"))?;
    let name = name.to_string();
    Ok(match ty {
        "key" => Kind::Key(name),
        "str" => Kind::Str(name),
        "int" => Kind::Int(name),
        "dbl" => Kind::Double(name),
        "pat" => Kind::Pattern(name),
        "unix" => Kind::UnixTime(name),
        _ => return Err(format!("unknown type {ty:?}")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_captured_table() {
        let specs = parse(include_str!("../../../tests/data/command_args.txt")).unwrap();
        assert!(specs.len() > 300);
        let set = specs.iter().find(|s| s.name == "set").unwrap();
        assert_eq!(set.arity, -3);
        assert_eq!(set.args.len(), 5);
        assert!(matches!(set.args[0].kind, Kind::Key(_)));
        let Kind::OneOf(ref exp) = set.args[4].kind else {
            panic!("{:?}", set.args[4])
        };
        assert!(set.args[4].optional);
        assert_eq!(exp[0].token.as_deref(), Some("EX"));
        assert!(matches!(exp[4].kind, Kind::Pure));
        let sort = specs.iter().find(|s| s.name == "sort").unwrap();
        assert_eq!(sort.args[3].repeat, Repeat::MultipleToken);
        let xadd = specs.iter().find(|s| s.name == "xadd").unwrap();
        let Kind::Block(ref trim) = xadd.args[2].kind else {
            panic!()
        };
        let Kind::OneOf(ref approx) = trim[1].kind else {
            panic!()
        };
        assert_eq!(approx[1].token.as_deref(), Some("~"));
    }
}
