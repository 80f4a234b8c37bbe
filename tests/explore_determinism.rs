//! A schedule whose clients use SPOP and math.random replays identically: every schedule of
//! a scenario runs an engine with the scenario's seed, and a failure prints that seed.

use redlab_client::explore::{Scenario, View};

fn spop_scenario() -> Scenario {
    let members: Vec<String> = (0..40).map(|i| format!("m{i}")).collect();
    let mut sadd: Vec<&str> = vec!["SADD", "s"];
    sadd.extend(members.iter().map(|m| m.as_str()));
    Scenario::new()
        .setup(&[&sadd])
        .client("A", |c| async move {
            let a = c.cmd(&["SPOP", "s"]).await;
            let b = c.cmd(&["SPOP", "s", "3"]).await;
            format!("{a:?} {b:?}")
        })
        .client("B", |c| async move {
            let a = c.cmd(&["SRANDMEMBER", "s", "-4"]).await;
            let b = c.cmd(&["EVAL", "return math.random(1000000)", "0"]).await;
            format!("{a:?} {b:?}")
        })
}

#[test]
fn a_spop_schedule_replays_identically_100_times() {
    let s = spop_scenario();
    let first = s.replay("ABAB").in_process();
    assert!(first.holds(), "{first}");
    assert_eq!(first.replies().len(), 4);
    for _ in 0..100 {
        assert_eq!(s.replay("ABAB").in_process().replies(), first.replies());
    }
    // The same seed in another scenario gives the same run; another seed does not.
    let seed = s.engine_seed();
    assert_eq!(
        spop_scenario()
            .seed(seed)
            .replay("ABAB")
            .in_process()
            .replies(),
        first.replies()
    );
    assert_ne!(
        spop_scenario()
            .seed(seed ^ 1)
            .replay("ABAB")
            .in_process()
            .replies(),
        first.replies()
    );
}

#[test]
fn a_counterexample_prints_its_engine_seed() {
    // An invariant that breaks as soon as A finishes, so there is always a counterexample.
    let s = spop_scenario()
        .seed(1234)
        .invariant("A never finishes", |v: &mut View| {
            v.result::<String>("A").is_none()
        });
    let report = s.random(1, 20);
    let f = report.expect_failure();
    assert_eq!(f.seed, 1234);
    let text = f.to_string();
    assert!(
        text.contains("engine seed: 1234") && text.contains("REDLAB_SEED=1234"),
        "{text}"
    );
}
