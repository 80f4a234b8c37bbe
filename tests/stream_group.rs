//! `StreamGroup` on redlab's virtual clock: entries become claimable exactly when the clock
//! has moved past the min idle time, and claim-or-read prefers abandoned work to new work.
//! The same calls run against a real redis-server (where time is not ours to move, so only
//! the clock-free parts are checked there).

use std::time::Duration;

use redlab::Clock;
use redlab_client::{Connection, Delivery, Error, InProcess, RealRedis, StreamGroup};

async fn fill(c: &Connection, n: usize) -> Vec<String> {
    let mut ids = Vec::new();
    for i in 0..n {
        let id = c
            .cmd(&["XADD", "jobs", "*", "job", &format!("j{i}")])
            .await
            .unwrap();
        ids.push(id.as_str().unwrap().to_string());
    }
    ids
}

#[tokio::test]
async fn idle_entries_are_claimed_when_the_clock_moves() {
    let clock = Clock::manual(1_700_000_000_000);
    let lab = InProcess::with_clock(redlab::Config::default(), clock.clone());
    let c = lab.connect().await;
    let g = StreamGroup::new(c.clone(), "jobs", "workers");
    assert!(g.create("$").await.unwrap());
    assert!(!g.create("$").await.unwrap(), "BUSYGROUP is not an error");
    let ids = fill(&c, 3).await;
    assert_eq!(
        ids[0], "1700000000000-0",
        "auto IDs come from the virtual clock"
    );

    let got = g.read_new("alice", 2).await.unwrap();
    assert_eq!(got.len(), 2);
    assert_eq!(got[1].get("job"), Some(&b"j1"[..]));
    let idle = Duration::from_secs(30);
    assert!(g.claim_idle("bob", idle, 10).await.unwrap().is_empty());
    // Not idle long enough yet: bob gets new work instead.
    match g.claim_or_read("bob", idle).await.unwrap() {
        Some(Delivery::New(e)) => assert_eq!(e.id, ids[2]),
        other => panic!("{other:?}"),
    }
    clock.advance(Duration::from_millis(29_999));
    assert_eq!(g.claim_or_read("bob", idle).await.unwrap(), None);
    clock.advance(Duration::from_millis(1));
    match g.claim_or_read("bob", idle).await.unwrap() {
        Some(Delivery::Claimed(e)) => assert_eq!(e.id, ids[0]),
        other => panic!("{other:?}"),
    }
    let claimed = g.claim_idle("carol", idle, 10).await.unwrap();
    assert_eq!(
        claimed.iter().map(|e| e.id.clone()).collect::<Vec<_>>(),
        vec![ids[1].clone(), ids[2].clone()],
        "bob's own new entry has been idle as long"
    );
    let mine = g.read_pending("bob", 10).await.unwrap();
    assert_eq!(mine.len(), 1);
    assert_eq!(g.ack(&[&ids[0], &ids[2], &ids[2]]).await.unwrap(), 2);
    assert!(g.read_pending("bob", 10).await.unwrap().is_empty());
    match g
        .claim_or_read("bob", Duration::from_millis(u64::MAX / 2))
        .await
    {
        Err(Error::Invalid(m)) => assert_eq!(m, "invalid-min-idle"),
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn the_same_calls_work_on_real_redis() {
    let Some(real) = RealRedis::start_or_skip("stream_group_real") else {
        return;
    };
    let c = Connection::tcp(real.addr()).await.unwrap();
    let g = StreamGroup::new(c.clone(), "jobs", "workers");
    assert!(g.create("0").await.unwrap());
    let ids = fill(&c, 2).await;
    match g.claim_or_read("a", Duration::from_secs(60)).await.unwrap() {
        Some(Delivery::New(e)) => assert_eq!(e.id, ids[0]),
        other => panic!("{other:?}"),
    }
    let claimed = g.claim_idle("b", Duration::ZERO, 10).await.unwrap();
    assert_eq!(claimed.len(), 1);
    assert_eq!(g.read_new("b", 10).await.unwrap().len(), 1);
    assert_eq!(g.ack(&[&ids[0], &ids[1]]).await.unwrap(), 2);
    assert_eq!(g.claim_or_read("a", Duration::ZERO).await.unwrap(), None);
}
