//! Generated commands to redlab and a real redis-server side by side; see
//! `redlab_server::fuzzing::differential`. Needs redis-server on PATH (or REDIS_SERVER_BIN).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use redlab_client::RealRedis;
use redlab_server::fuzzing::differential::{known_difference, show_command, Differential, Outcome};
use redlab_server::fuzzing::generate::Choices;

struct Pair {
    diff: Differential,
    _real: RealRedis,
    _server: redlab_server::Server,
}

fn pair() -> &'static Pair {
    static PAIR: OnceLock<Pair> = OnceLock::new();
    PAIR.get_or_init(|| {
        let real = RealRedis::start().expect("the differential target needs redis-server");
        let server = redlab_server::Server::start();
        let diff = Differential::new(
            include_str!("../../tests/data/command_args.txt"),
            real.addr(),
            server.addr(),
        );
        Pair {
            diff,
            _real: real,
            _server: server,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let p = pair();
    let mut out = Outcome::default();
    p.diff
        .run_case(&mut Choices::from_bytes(data), 16, &mut out);
    for f in &out.findings {
        if known_difference(f).is_none() {
            let before: Vec<String> = f.before.iter().map(|b| show_command(b)).collect();
            panic!(
                "{:?}: {}\n  redis:  {}\n  redlab: {}\n  after:\n    {}",
                f.kind,
                show_command(&f.command),
                f.redis,
                f.redlab,
                before.join("\n    ")
            );
        }
    }
});
