//! CLUSTER SLOT-STATS (Valkey 8.0, Redis 8.2): per-slot statistics of the slots this node
//! serves, by SLOTSRANGE or ORDERBY a metric. Checked against valkey-server 8.1 in cluster
//! mode (replies and error texts); Redis 8.2's is the same command, ported from Valkey.
//!
//! key-count is exact. cpu-usec, network-bytes-in and network-bytes-out exist only while
//! cluster-slot-stats-enabled is yes, as in Valkey; redlab does not measure them and shows 0
//! (as INFO shows its idle counters, DIFFERENCES.md).

use super::slot::{key_slot, SLOTS};
use super::topology::lock;
use crate::cmd::args;
use crate::cmd::table::CmdResult;
use crate::engine::{Call, Engine};
use crate::errors;
use crate::reply::Reply;

const METRICS: [&str; 4] = [
    "key-count",
    "cpu-usec",
    "network-bytes-in",
    "network-bytes-out",
];

/// Whether the measured metrics are on (Valkey's cluster-slot-stats-enabled).
fn enabled(e: &Engine) -> bool {
    e.config
        .extra
        .get("cluster-slot-stats-enabled")
        .is_some_and(|v| v.eq_ignore_ascii_case("yes"))
}

/// The slots this node serves: its own, or its primary's for a replica.
fn served(e: &Engine) -> Result<Vec<bool>, Reply> {
    let n = e
        .cluster
        .as_ref()
        .ok_or_else(|| Reply::err(errors::CLUSTER_DISABLED))?;
    let topo = lock(&n.shared);
    let mut me = topo
        .index_of(&n.me)
        .ok_or_else(|| Reply::err(errors::THIS_NODE_WAS_FORGOTTEN_BY_ITS))?;
    if let Some(p) = topo.nodes()[me].replica_of.as_deref() {
        me = topo.index_of(p).unwrap_or(me);
    }
    Ok((0..SLOTS as u16)
        .map(|s| topo.owner_index(s) == Some(me))
        .collect())
}

/// Keys of database 0 per slot.
fn key_counts(e: &mut Engine) -> Vec<u64> {
    let mut counts = vec![0u64; SLOTS];
    for k in e.db(0).keys() {
        counts[key_slot(k) as usize] += 1;
    }
    counts
}

/// A slot's entry: `[slot, {metric: value, ...}]`.
fn entry(slot: usize, keys: u64, all_metrics: bool) -> Reply {
    let mut stats = vec![(Reply::bulk("key-count"), Reply::Int(keys as i64))];
    if all_metrics {
        for m in &METRICS[1..] {
            stats.push((Reply::bulk(m), Reply::Int(0)));
        }
    }
    Reply::Array(vec![Reply::Int(slot as i64), Reply::Map(stats)])
}

/// `CLUSTER SLOT-STATS SLOTSRANGE start end | ORDERBY metric [LIMIT n] [ASC|DESC]`
pub(super) fn slot_stats(e: &mut Engine, call: &mut Call) -> CmdResult {
    let all_metrics = enabled(e);
    let argc = call.argc();
    if argc == 5 && args::is(call.arg(2), "slotsrange") {
        let start = super::commands::slot_arg(call.arg(3))?;
        let end = super::commands::slot_arg(call.arg(4))?;
        if start > end {
            return Err(Reply::err(errors::slot_stats_range_reversed(start, end)));
        }
        let mine = served(e)?;
        let counts = key_counts(e);
        return Ok(Reply::Array(
            (start as usize..=end as usize)
                .filter(|&s| mine[s])
                .map(|s| entry(s, counts[s], all_metrics))
                .collect(),
        ));
    }
    if !(argc >= 4 && args::is(call.arg(2), "orderby")) {
        return Err(Reply::err(errors::subcommand_syntax(
            call.arg(0),
            call.arg(1),
        )));
    }
    let metric = METRICS
        .iter()
        .position(|m| args::is(call.arg(3), m))
        .filter(|&i| i == 0 || all_metrics)
        .ok_or_else(|| Reply::err(errors::SLOT_STATS_METRIC))?;
    let (mut limit, mut desc) = (SLOTS, true);
    let (mut limits, mut orders) = (0, 0);
    let mut i = 4;
    while i < argc {
        let more = argc > i + 1;
        if args::is(call.arg(i), "limit") && more {
            limit = crate::numfmt::parse_i64(call.arg(i + 1))
                .filter(|n| (1..=SLOTS as i64).contains(n))
                .ok_or_else(|| Reply::err(errors::SLOT_STATS_LIMIT))? as usize;
            i += 1;
            limits += 1;
        } else if args::is(call.arg(i), "asc") {
            desc = false;
            orders += 1;
        } else if args::is(call.arg(i), "desc") {
            desc = true;
            orders += 1;
        } else {
            return Err(Reply::err(errors::SYNTAX));
        }
        if limits > 1 || orders > 1 {
            return Err(Reply::err(errors::SLOT_STATS_REPEATED));
        }
        i += 1;
    }
    let mine = served(e)?;
    let counts = key_counts(e);
    // Only key-count is measured; the other metrics are 0 everywhere, so they order by slot.
    let value = |s: usize| if metric == 0 { counts[s] } else { 0 };
    let mut slots: Vec<usize> = (0..SLOTS).filter(|&s| mine[s]).collect();
    // Equal values in slot order, whichever the direction (Valkey's tie-break).
    slots.sort_by(|&a, &b| {
        let by = value(a).cmp(&value(b));
        (if desc { by.reverse() } else { by }).then(a.cmp(&b))
    });
    Ok(Reply::Array(
        slots
            .into_iter()
            .take(limit)
            .map(|s| entry(s, counts[s], all_metrics))
            .collect(),
    ))
}
