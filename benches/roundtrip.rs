//! The round-trip law: with a network round trip of 1.5 ms (injected as a delay on every
//! request), five sequential commands cost five round trips, while a pipeline of the same
//! five, or one EVALSHA doing the same five operations, costs one. Execution time is noise
//! next to the network. `cargo bench --bench roundtrip`.

use std::time::{Duration, Instant};

use redlab::{Fault, Server};

const SCRIPT: &str = "
redis.call('INCR', KEYS[1])
redis.call('INCR', KEYS[2])
redis.call('SET', KEYS[3], ARGV[1])
redis.call('SADD', KEYS[4], ARGV[1])
return redis.call('EXPIRE', KEYS[3], 100)
";

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

/// The five commands' work in one EVALSHA of SCRIPT.
fn run_script(script: &redis::Script, c: &mut redis::Connection) {
    let _: i64 = script
        .key("a")
        .key("b")
        .key("c")
        .key("s")
        .arg("x")
        .invoke(c)
        .unwrap();
}

/// The median time of `runs` calls of `f`.
fn timed(runs: usize, mut f: impl FnMut()) -> Duration {
    median(
        (0..runs)
            .map(|_| {
                let t = Instant::now();
                f();
                t.elapsed()
            })
            .collect(),
    )
}

fn main() {
    let server = Server::start();
    let mut c = redis::Client::open(server.url())
        .unwrap()
        .get_connection()
        .unwrap();
    let script = redis::Script::new(SCRIPT);
    run_script(&script, &mut c);
    server
        .faults()
        .add(Fault::on_any().delay(Duration::from_micros(1500)));
    let runs = 40;

    let sequential = timed(runs, || {
        let _: i64 = redis::cmd("INCR").arg("a").query(&mut c).unwrap();
        let _: i64 = redis::cmd("INCR").arg("b").query(&mut c).unwrap();
        let _: () = redis::cmd("SET").arg("c").arg("x").query(&mut c).unwrap();
        let _: i64 = redis::cmd("SADD").arg("s").arg("x").query(&mut c).unwrap();
        let _: i64 = redis::cmd("EXPIRE")
            .arg("c")
            .arg(100)
            .query(&mut c)
            .unwrap();
    });
    let pipelined = timed(runs, || {
        let _: (i64, i64, (), i64, i64) = redis::pipe()
            .cmd("INCR")
            .arg("a")
            .cmd("INCR")
            .arg("b")
            .cmd("SET")
            .arg("c")
            .arg("x")
            .cmd("SADD")
            .arg("s")
            .arg("x")
            .cmd("EXPIRE")
            .arg("c")
            .arg(100)
            .query(&mut c)
            .unwrap();
    });
    let scripted = timed(runs, || {
        run_script(&script, &mut c);
    });
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "injected round trip: 1.5 ms per request ({} runs, medians)",
        runs
    );
    println!("5 sequential commands : {:>6.2} ms", ms(sequential));
    println!(
        "1 pipeline of 5       : {:>6.2} ms  ({:.1}x faster than sequential)",
        ms(pipelined),
        ms(sequential) / ms(pipelined)
    );
    println!(
        "1 EVALSHA doing the 5 : {:>6.2} ms  ({:.1}x faster than sequential)",
        ms(scripted),
        ms(sequential) / ms(scripted)
    );
}
