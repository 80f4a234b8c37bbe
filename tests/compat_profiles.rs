//! Compatibility profiles through the client crate and the explorer: the same invariant
//! suite runs under redis-7.0 and valkey-8.1, and a command the profile lacks fails as the
//! production version would, and shows in the server's report.

use redlab::Profile;
use redlab_client::explore::{Scenario, View};
use redlab_client::{InProcess, MonotonicMax};

const DIRTY: &str = "dirty";

/// Two clients raise the same max through the script; it must end at the larger id.
fn max_suite(profile: Profile) -> Scenario {
    Scenario::new()
        .compat(profile)
        .setup(&[&["SET", "m", "100"]])
        .client("A", |c| async move {
            MonotonicMax::new(c, DIRTY).update("m", 150).await
        })
        .client("B", |c| async move {
            MonotonicMax::new(c, DIRTY).update("m", 120).await
        })
        .invariant("ends at the larger id", |v: &mut View| {
            if v.is_final() && v.get_int("m") != Some(150) {
                return Err(format!("m is {:?}", v.get_int("m")));
            }
            Ok(())
        })
}

#[test]
fn an_invariant_suite_runs_under_each_reference_profile() {
    for p in [Profile::Redis70, Profile::Valkey81, Profile::Redis84] {
        max_suite(p).exhaustive().assert_holds();
    }
}

#[test]
fn a_scenario_sees_its_profile() {
    // HEXPIRE exists from redis-7.4: under redis-7.2 the client's command fails.
    let run = |p: Profile| {
        Scenario::new()
            .compat(p)
            .setup(&[&["HSET", "h", "f", "v"]])
            .client("A", |c| async move {
                let r = c.cmd(&["HEXPIRE", "h", "10", "FIELDS", "1", "f"]).await;
                let outcome = if r.is_ok() { "ran" } else { "refused" };
                c.cmd(&["SET", "outcome", outcome]).await
            })
            .invariant("HEXPIRE ran", |v: &mut View| {
                if v.is_final() && v.get("outcome").as_deref() != Some("ran") {
                    return Err(format!("HEXPIRE: {:?}", v.get("outcome")));
                }
                Ok(())
            })
            .exhaustive()
    };
    run(Profile::Redis74).assert_holds();
    assert!(!run(Profile::Redis72).holds());
}

#[tokio::test]
async fn in_process_connections_answer_as_the_profile() {
    let engine = InProcess::compat(Profile::Valkey81);
    let c = engine.connect().await;
    let v = c
        .cmd(&[
            "EVAL",
            "return {redis.REDIS_VERSION, server.REDIS_VERSION_NUM}",
            "0",
        ])
        .await
        .expect("EVAL");
    let items = v.as_array().expect("an array");
    assert_eq!(items[0].as_str(), Some("7.2.4"));
    assert_eq!(items[1].as_int(), Some(0x070204));
    assert!(c.cmd(&["HGETDEL", "h", "FIELDS", "1", "f"]).await.is_err());
    let report = c.cmd(&["REDLAB.COMPAT", "REPORT"]).await.expect("report");
    let entries = report.as_array().expect("an array");
    assert_eq!(entries.len(), 1);
    assert_eq!(
        entries[0].as_array().expect("entry")[0].as_str(),
        Some("hgetdel")
    );
}

#[test]
fn a_server_reports_what_its_profile_lacks() {
    let server = redlab::Server::builder().compat(Profile::Redis72).start();
    let mut c = redis::Client::open(server.url())
        .expect("url")
        .get_connection()
        .expect("connect");
    let r: redis::RedisResult<i64> = redis::cmd("DELEX").arg("k").query(&mut c);
    assert!(r.is_err());
    let info: String = redis::cmd("INFO")
        .arg("server")
        .query(&mut c)
        .expect("INFO");
    assert!(info.contains("redis_version:7.2.11\r\n"), "{info}");
    let report = server.compat_report();
    assert_eq!(report.len(), 1, "{report:?}");
    assert_eq!(report[0].what, "delex");
    assert_eq!(report[0].available_in, "Redis 8.4");
}
