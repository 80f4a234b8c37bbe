//! The limiters' retry-after loop, explored with its sleeps on the virtual clock: a client
//! that is limited sleeps for the `retry_after` the limiter gave and tries again. The
//! sliding log admits everyone in the end and never more than its limit in any window,
//! whatever the interleaving; its hits within one window are linearizable against a
//! counter of `limit` slots. The naive GET-check-INCR limiter, with the same loop, is
//! caught admitting too many.

mod explore_support;

use std::time::Duration;

use explore_support::{
    assert_reproduced, lua_ready, note, on_real, real, stamp, Belief, Journal, Shared,
};
use redlab_client::explore::linearizable::models::{Hit, LimiterModel};
use redlab_client::explore::linearizable::History;
use redlab_client::explore::{Scenario, View};
use redlab_client::{Connection, Decision, Result, Script, SlidingLog};

const LIMIT: u64 = 2;
const WINDOW: Duration = Duration::from_millis(300);
const KEY: &str = "rate:user1";

/// The naive limiter: read the count, compare in the client, increment. Returns None when
/// admitted, else how long to wait.
async fn naive_hit(c: &Connection) -> Result<Option<Duration>> {
    let n = c.cmd(&["GET", KEY]).await?.as_int().unwrap_or(0);
    if n >= LIMIT as i64 {
        let ttl = c.cmd(&["PTTL", KEY]).await?.as_int().unwrap_or(1).max(1);
        return Ok(Some(Duration::from_millis(ttl as u64)));
    }
    c.cmd(&["INCR", KEY]).await?;
    if n == 0 {
        c.cmd(&["PEXPIRE", KEY, &WINDOW.as_millis().to_string()])
            .await?;
    }
    Ok(None)
}

/// Hit until admitted, sleeping for the retry-after each refusal gives; at most 10 tries.
async fn with_retry(
    c: Connection,
    j: Shared,
    h: History<LimiterModel>,
    who: &'static str,
    naive: bool,
) -> Result<u32> {
    let log = SlidingLog::new(c.clone(), LIMIT, WINDOW);
    for attempt in 1..=10 {
        let call = h.call(who, Hit);
        let wait = if naive {
            naive_hit(&c).await?
        } else {
            match log.hit(KEY).await? {
                Decision::Allowed { .. } => None,
                Decision::Limited { retry_after } => Some(retry_after),
            }
        };
        // Only the first window's hits are checked against the counter model.
        if attempt == 1 {
            h.ret(call, wait.is_none());
        }
        match wait {
            None => {
                note(&j, who, Belief::Admitted(1));
                return Ok(attempt);
            }
            Some(d) => tokio::time::sleep(d.max(Duration::from_millis(1))).await,
        }
    }
    Ok(0)
}

fn scenario(naive: bool, j: &Shared, h: &History<LimiterModel>) -> Scenario {
    let mut s = Scenario::new()
        .load_script(&Script::new(include_str!("../scripts/sliding_log.lua")))
        .timer_steps(2);
    for who in ["A", "B", "C"] {
        let (j, h) = (j.clone(), h.clone());
        s = s.client(who, move |c| {
            with_retry(c, j.clone(), h.clone(), who, naive)
        });
    }
    let (jr, jc) = (j.clone(), j.clone());
    s.before_each(move || *jr.borrow_mut() = Journal::default())
        .linearizable(
            "the first hits are a counter's",
            h,
            LimiterModel::new(LIMIT),
        )
        .invariant(
            "never more than the limit in any window",
            move |v: &mut View| {
                stamp(&jc, v.elapsed_ms());
                let mut at: Vec<i64> = jc.borrow().entries.iter().filter_map(|e| e.at).collect();
                at.sort();
                // On real Redis the steps are stamped with wall time, a few ms after the
                // server ran them on a loaded machine: allow for that there.
                let slack = if v.on_real_redis() { 30 } else { 0 };
                let w = WINDOW.as_millis() as i64;
                for k in LIMIT as usize..at.len() {
                    if at[k] - at[k - LIMIT as usize] < w - slack {
                        return Err(format!(
                            "admitted at {:?} ms: more than {} within {} ms",
                            at, LIMIT, w
                        ));
                    }
                }
                Ok(())
            },
        )
        .invariant("everyone gets through", |v: &mut View| {
            if !v.is_final() {
                return Ok(());
            }
            for who in ["A", "B", "C"] {
                match v.result::<Result<u32>>(who) {
                    Some(Ok(n)) if *n > 0 => {}
                    other => return Err(format!("{} ended with {:?}", who, other)),
                }
            }
            Ok(())
        })
}

#[test]
fn the_sliding_log_retry_loop_holds_and_the_naive_one_is_caught() {
    if !lua_ready("the_sliding_log_retry_loop_holds_and_the_naive_one_is_caught") {
        return;
    }
    let server = real("the_sliding_log_retry_loop_holds_and_the_naive_one_is_caught");
    let j: Shared = Default::default();
    let h: History<LimiterModel> = History::new();

    let mut naive = scenario(true, &j, &h);
    naive = on_real(naive, &server, 0);
    let f = naive.random(5, 2_000);
    let f = f.expect_failure();
    assert_reproduced(f, &server);

    let mut correct = scenario(false, &j, &h);
    correct = on_real(correct, &server, 3);
    let r = correct.random(5, 2_000);
    r.assert_holds();
    correct.pct(6, 3, 500).assert_holds();
}
