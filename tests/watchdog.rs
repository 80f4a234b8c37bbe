//! The lock watchdog under redlab's manual clock: it keeps a lease alive across many TTLs
//! while the holder works, and reports the loss when a stall outlasts the lease. Server time
//! moves only by the manual clock (a stall fault advances it too), so the outcome does not
//! depend on how fast the machine runs the watchdog's renewals.

use std::time::Duration;

use redlab::{Clock, Fault, Server};
use redlab_client::{Acquire, Connection, Guard, Lock, Script, WatchdogEnd};

const TTL: Duration = Duration::from_millis(300);

/// A server on a manual clock, and the lock `lock:work` acquired on it.
struct Held {
    clock: Clock,
    server: Server,
    conn: Connection,
    lock: Lock,
    guard: Guard,
}

async fn hold() -> Held {
    let clock = Clock::manual(1_700_000_000_000);
    let server = Server::builder().clock(clock.clone()).start();
    let conn = Connection::tcp(server.addr()).await.unwrap();
    let lock = Lock::new(conn.clone(), "lock:work", TTL);
    let Acquire::Acquired(guard) = lock.try_acquire().await.unwrap() else {
        panic!("acquire")
    };
    Held {
        clock,
        server,
        conn,
        lock,
        guard,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watchdog_keeps_the_lease_for_ten_ttls() {
    let Held {
        clock,
        server: _server,
        conn,
        lock,
        guard,
    } = hold().await;
    let dog = lock.watchdog(&guard);
    // The holder works for 10 TTLs of server time. Server time moves by TTL/3 per step, and
    // the next step waits until the watchdog renewed the lease (PTTL back to a full TTL):
    // however slowly the machine schedules the watchdog, no step outlives the lease, and a
    // watchdog that stopped renewing fails the wait.
    for step in 0..30 {
        clock.advance(TTL / 3);
        let renewed = async {
            loop {
                assert!(
                    !dog.is_lost(),
                    "step {step}: the watchdog lost a lock it should have kept"
                );
                let pttl = conn.cmd(&["PTTL", "lock:work"]).await.unwrap().as_int();
                if pttl == Some(TTL.as_millis() as i64) {
                    return;
                }
                assert!(
                    pttl.is_some_and(|ms| ms > 0),
                    "step {step}: the lease ran out (PTTL {pttl:?})"
                );
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        };
        tokio::time::timeout(Duration::from_secs(30), renewed)
            .await
            .expect("the watchdog renews within 30 s");
    }
    let owner = conn.cmd(&["GET", "lock:work"]).await.unwrap();
    assert_eq!(
        owner.as_str(),
        Some(guard.token.as_str()),
        "still the owner after 10 TTLs"
    );
    assert!(lock.release(&guard).await.unwrap());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_watchdog_reports_the_loss_when_a_stall_outlasts_the_lease() {
    let Held {
        server,
        conn,
        lock,
        guard,
        ..
    } = hold().await;
    // The next renewal finds the server stalled for 1.5 TTL: the lease runs out first.
    let renew_sha = Script::new(include_str!("../scripts/lock_renew.lua"))
        .sha()
        .to_string();
    server
        .faults()
        .add(Fault::on_script(&renew_sha).stall(TTL * 3 / 2).times(1));
    let mut dog = lock.watchdog(&guard);
    let end = tokio::time::timeout(Duration::from_secs(30), dog.lost())
        .await
        .expect("the watchdog reports");
    assert_eq!(end, WatchdogEnd::Lost);
    assert_eq!(server.faults().log().len(), 1, "the stall fired once");
    let owner = conn.cmd(&["EXISTS", "lock:work"]).await.unwrap();
    assert_eq!(owner.as_int(), Some(0), "the lease ran out");
}
