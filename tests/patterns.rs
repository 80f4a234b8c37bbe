//! Every pattern, the same test code against three targets: redlab in-process, redlab over
//! TCP, and a real redis-server. A behaviour that passes here passes on production Redis.

use std::time::Duration;

use redlab_client::{
    Acquire, Connection, Decision, Error, FixedWindow, InProcess, Lock, MonotonicMax, RealRedis,
    SlidingLog, TokenBucket, VersionedHash, Write,
};

/// One target: keeps its server alive while the test runs.
enum Target {
    InProcess(InProcess),
    Tcp(redlab::Server),
    Real(RealRedis),
}

impl Target {
    async fn conn(&self) -> Connection {
        match self {
            Target::InProcess(e) => e.connect().await,
            Target::Tcp(s) => Connection::tcp(s.addr()).await.unwrap(),
            Target::Real(r) => Connection::tcp(r.addr()).await.unwrap(),
        }
    }
}

/// The three targets, or two with a loud note when redis-server is missing (fatal under CI).
fn targets(test: &str) -> Vec<(&'static str, Target)> {
    let mut t = vec![
        (
            "in-process",
            Target::InProcess(InProcess::new(redlab::Config::default())),
        ),
        ("tcp", Target::Tcp(redlab::Server::start())),
    ];
    if let Some(real) = RealRedis::start_or_skip(test) {
        t.push(("real-redis", Target::Real(real)));
    }
    t
}

macro_rules! three_ways {
    ($name:ident, $body:ident) => {
        #[tokio::test]
        async fn $name() {
            for (label, target) in targets(stringify!($name)) {
                let conn = target.conn().await;
                $body(conn, label).await;
            }
        }
    };
}

async fn lock_is_exclusive_and_owner_only(conn: Connection, on: &str) {
    // A lease long enough that a loaded machine's pause between the two acquires cannot eat it.
    let lock = Lock::new(conn.clone(), "lock:order:100", Duration::from_secs(60));
    let Acquire::Acquired(a) = lock.try_acquire().await.unwrap() else {
        panic!("{on}: first acquire")
    };
    match lock.try_acquire().await.unwrap() {
        Acquire::Held { remaining } => assert!(
            remaining <= Duration::from_secs(60) && remaining > Duration::from_secs(30),
            "{on}"
        ),
        other => panic!("{on}: second acquire must see the lock held, got {other:?}"),
    }
    let stranger = redlab_client::Guard {
        token: "not-the-owner".into(),
        fence: 0,
    };
    assert!(
        !lock.release(&stranger).await.unwrap(),
        "{on}: a stranger cannot release"
    );
    assert!(
        !lock.renew(&stranger).await.unwrap(),
        "{on}: a stranger cannot renew"
    );
    assert!(lock.renew(&a).await.unwrap(), "{on}: the owner renews");
    assert!(lock.release(&a).await.unwrap(), "{on}: the owner releases");
    assert!(
        !lock.release(&a).await.unwrap(),
        "{on}: a second release does nothing"
    );
    let Acquire::Acquired(b) = lock.try_acquire().await.unwrap() else {
        panic!("{on}: free again")
    };
    assert!(b.fence > a.fence, "{on}: fencing tokens increase");
}
three_ways!(lock_exclusive_owner_only, lock_is_exclusive_and_owner_only);

async fn lock_expires_and_fences_the_stale_holder(conn: Connection, on: &str) {
    let lock = Lock::new(conn.clone(), "lock:short", Duration::from_millis(100));
    let Acquire::Acquired(a) = lock.try_acquire().await.unwrap() else {
        panic!("{on}")
    };
    tokio::time::sleep(Duration::from_millis(250)).await;
    let Acquire::Acquired(b) = lock.try_acquire().await.unwrap() else {
        panic!("{on}: the expired lease is free")
    };
    assert!(
        !lock.release(&a).await.unwrap(),
        "{on}: the paused holder cannot release the new owner's lock"
    );
    assert!(!lock.renew(&a).await.unwrap(), "{on}: nor renew it");
    assert!(
        b.fence > a.fence,
        "{on}: the resource can reject the stale holder by its lower fence"
    );
    let owner = conn.cmd(&["GET", "lock:short"]).await.unwrap();
    assert_eq!(owner.as_str(), Some(b.token.as_str()), "{on}");
}
three_ways!(
    lock_expiry_and_fencing,
    lock_expires_and_fences_the_stale_holder
);

async fn lock_handover_leaves_one_owner(conn: Connection, on: &str) {
    let lock = Lock::new(conn.clone(), "lock:job", Duration::from_secs(5));
    let Acquire::Acquired(a) = lock.try_acquire().await.unwrap() else {
        panic!("{on}")
    };
    let b = lock.handover(&a).await.unwrap().expect("handed over");
    assert!(b.fence > a.fence, "{on}");
    assert_eq!(
        lock.handover(&a).await.unwrap(),
        None,
        "{on}: the old owner cannot hand over again"
    );
    assert!(!lock.release(&a).await.unwrap(), "{on}");
    assert!(lock.release(&b).await.unwrap(), "{on}");
}
three_ways!(lock_handover, lock_handover_leaves_one_owner);

async fn fixed_window_statuses(conn: Connection, on: &str) {
    let limiter = FixedWindow::new(conn.clone(), 3, 60);
    for remaining in [2, 1, 0] {
        assert_eq!(
            limiter.hit("fw").await.unwrap(),
            Decision::Allowed { remaining },
            "{on}"
        );
    }
    match limiter.hit("fw").await.unwrap() {
        Decision::Limited { retry_after } => {
            assert!(retry_after <= Duration::from_secs(60), "{on}")
        }
        other => panic!("{on}: expected limited, got {other:?}"),
    }
    let ttl = conn.cmd(&["TTL", "fw"]).await.unwrap().as_int().unwrap();
    assert!(
        (50..=60).contains(&ttl),
        "{on}: the TTL was set on the first hit only"
    );
    for bad in ["1.5", "1e3", "-1", "0", "abc"] {
        let l = FixedWindow::new(conn.clone(), bad, 60);
        assert_eq!(
            l.hit("fw:new").await,
            Err(Error::Invalid("invalid-arguments".into())),
            "{on}: limit {bad}"
        );
    }
    assert_eq!(
        conn.cmd(&["EXISTS", "fw:new"]).await.unwrap().as_int(),
        Some(0),
        "{on}: invalid input writes nothing"
    );
    conn.cmd(&["SET", "fw:abc", "abc", "EX", "60"])
        .await
        .unwrap();
    assert_eq!(
        limiter.hit("fw:abc").await,
        Err(Error::Invalid("invalid-counter".into())),
        "{on}"
    );
    assert_eq!(
        conn.cmd(&["GET", "fw:abc"]).await.unwrap().as_str(),
        Some("abc"),
        "{on}: untouched"
    );
    conn.cmd(&["SET", "fw:nottl", "1"]).await.unwrap();
    assert_eq!(
        limiter.hit("fw:nottl").await,
        Err(Error::Invalid("missing-ttl".into())),
        "{on}"
    );
    assert_eq!(
        conn.cmd(&["GET", "fw:nottl"]).await.unwrap().as_str(),
        Some("1"),
        "{on}: untouched"
    );
    assert_eq!(
        conn.cmd(&["TTL", "fw:nottl"]).await.unwrap().as_int(),
        Some(-1),
        "{on}: no TTL added"
    );
}
three_ways!(fixed_window, fixed_window_statuses);

async fn sliding_log_limits_any_window(conn: Connection, on: &str) {
    // Real time passes (real Redis is a target): the three hits must fall in one window even
    // on a loaded machine, so the window is 2 s; the wait for it to slide is a lower bound.
    const WINDOW: Duration = Duration::from_secs(2);
    let limiter = SlidingLog::new(conn.clone(), 2, WINDOW);
    assert_eq!(
        limiter.hit("sl").await.unwrap(),
        Decision::Allowed { remaining: 1 },
        "{on}"
    );
    assert_eq!(
        limiter.hit("sl").await.unwrap(),
        Decision::Allowed { remaining: 0 },
        "{on}"
    );
    let Decision::Limited { retry_after } = limiter.hit("sl").await.unwrap() else {
        panic!("{on}: third hit limited")
    };
    assert!(retry_after <= WINDOW, "{on}");
    tokio::time::sleep(WINDOW + Duration::from_millis(50)).await;
    assert_eq!(
        limiter.hit("sl").await.unwrap(),
        Decision::Allowed { remaining: 1 },
        "{on}: the window slid"
    );
    let ttl = conn.cmd(&["PTTL", "sl"]).await.unwrap().as_int().unwrap();
    assert!(
        ttl > 0 && ttl <= WINDOW.as_millis() as i64,
        "{on}: the log has a TTL"
    );
    let bad = SlidingLog::new(conn.clone(), "0", WINDOW);
    assert_eq!(
        bad.hit("sl:bad").await,
        Err(Error::Invalid("invalid-arguments".into())),
        "{on}"
    );
}
three_ways!(sliding_log, sliding_log_limits_any_window);

async fn token_bucket_bursts_then_refills(conn: Connection, on: &str) {
    // The slowest refill the script takes (1 token/s): the four takes must see less than one
    // token come back, which leaves a loaded machine a whole second between them.
    let bucket = TokenBucket::new(conn.clone(), 3, 1);
    for remaining in [2, 1, 0] {
        assert_eq!(
            bucket.take("tb", 1).await.unwrap(),
            Decision::Allowed { remaining },
            "{on}"
        );
    }
    let Decision::Limited { retry_after } = bucket.take("tb", 1).await.unwrap() else {
        panic!("{on}")
    };
    assert!(
        retry_after <= Duration::from_secs(1),
        "{on}: one token takes 1 s at 1/s"
    );
    let ttl = conn.cmd(&["PTTL", "tb"]).await.unwrap().as_int().unwrap();
    assert!(ttl > 0, "{on}: the bucket always has a TTL");
    tokio::time::sleep(Duration::from_millis(1050)).await;
    assert!(
        matches!(
            bucket.take("tb", 1).await.unwrap(),
            Decision::Allowed { .. }
        ),
        "{on}: refilled"
    );
    assert_eq!(
        bucket.take("tb", 4).await,
        Err(Error::Invalid("invalid-arguments".into())),
        "{on}: cost over capacity"
    );
}
three_ways!(token_bucket, token_bucket_bursts_then_refills);

async fn monotonic_max_only_moves_forward(conn: Connection, on: &str) {
    let max = MonotonicMax::new(conn.clone(), "lastRead:dirty");
    assert!(max.update("lastRead:u1", 150).await.unwrap(), "{on}");
    assert!(
        !max.update("lastRead:u1", 120).await.unwrap(),
        "{on}: the late smaller id is ignored"
    );
    assert_eq!(max.get("lastRead:u1").await.unwrap(), Some(150), "{on}");
    // Snowflake-sized ids differ only past 2^53: compared as decimal strings.
    let big = 1_844_674_407_370_955_161u64;
    assert!(max.update("lastRead:u2", big).await.unwrap(), "{on}");
    assert!(
        !max.update("lastRead:u2", big - 1).await.unwrap(),
        "{on}: neighbours above 2^53 are told apart"
    );
    assert!(max.update("lastRead:u2", big + 1).await.unwrap(), "{on}");
    let mut drained = max.drain(10).await.unwrap();
    drained.sort();
    assert_eq!(
        drained,
        vec![
            ("lastRead:u1".to_string(), Some(150)),
            ("lastRead:u2".to_string(), Some(big + 1))
        ],
        "{on}"
    );
    assert!(max.drain(10).await.unwrap().is_empty(), "{on}: drained");
}
three_ways!(monotonic_max, monotonic_max_only_moves_forward);

async fn versioned_write_rejects_stale_batches(conn: Connection, on: &str) {
    let vh = VersionedHash::new(conn.clone());
    assert_eq!(
        vh.write("product:42", &[("price", "150000"), ("stock", "50")], 1)
            .await
            .unwrap(),
        Write::Applied,
        "{on}"
    );
    assert_eq!(
        vh.write("product:42", &[("stock", "0")], 2).await.unwrap(),
        Write::Applied,
        "{on}: the admin edit"
    );
    assert_eq!(
        vh.write("product:42", &[("stock", "50")], 1).await.unwrap(),
        Write::Stale { stored: 2 },
        "{on}: the stale batch"
    );
    let stock = conn.cmd(&["HGET", "product:42", "stock"]).await.unwrap();
    assert_eq!(stock.as_str(), Some("0"), "{on}: the admin's edit survives");
    assert_eq!(
        vh.write("product:42", &[("version", "9")], 3).await,
        Err(Error::Invalid("invalid-fields".into())),
        "{on}"
    );
}
three_ways!(versioned_write, versioned_write_rejects_stale_batches);
