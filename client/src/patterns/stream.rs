//! `StreamGroup`: a typed consumer-group API over one stream — create the group, read new
//! entries, re-read one's own pending entries, acknowledge, claim idle entries — and the
//! worker's step "claim the oldest idle entry or read a new one" as one reviewed script
//! (`scripts/stream_claim_or_read.lua`).
//!
//! At-least-once delivery follows when a worker acknowledges only after processing: a
//! worker that dies holding an entry leaves it pending, and another worker claims it once
//! it has been idle long enough. Idle time is measured by the server clock, so under redlab
//! a test moves the clock to make abandoned work claimable.

use std::time::Duration;

use crate::connection::Connection;
use crate::error::{Error, Result};
use crate::script::Script;
use crate::value::Value;

const CLAIM_OR_READ: &str = include_str!("../../../scripts/stream_claim_or_read.lua");

/// One stream entry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamEntry {
    pub id: String,
    pub fields: Vec<(Vec<u8>, Vec<u8>)>,
}

impl StreamEntry {
    /// The value of the first field named `name`.
    pub fn get(&self, name: &str) -> Option<&[u8]> {
        self.fields
            .iter()
            .find(|(f, _)| f == name.as_bytes())
            .map(|(_, v)| &v[..])
    }
}

/// What `claim_or_read` handed the worker.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Delivery {
    /// An entry another consumer left idle, now pending for this one.
    Claimed(StreamEntry),
    /// A new entry, now pending for this one.
    New(StreamEntry),
}

impl Delivery {
    pub fn entry(&self) -> &StreamEntry {
        match self {
            Delivery::Claimed(e) | Delivery::New(e) => e,
        }
    }
}

pub struct StreamGroup {
    conn: Connection,
    stream: String,
    group: String,
    script: Script,
}

fn protocol(what: &str, v: &Value) -> Error {
    Error::Protocol(format!("{what}: unexpected reply {v:?}"))
}

fn bytes(v: &Value) -> Option<Vec<u8>> {
    v.as_bytes().map(<[u8]>::to_vec)
}

/// `[id, [field, value, ...]]` as an entry; None for `[id, nil]` (an entry deleted while
/// pending).
fn entry(v: &Value) -> Result<Option<StreamEntry>> {
    let items = v.as_array().ok_or_else(|| protocol("entry", v))?;
    let id = items
        .first()
        .and_then(Value::as_str)
        .ok_or_else(|| protocol("entry id", v))?
        .to_string();
    let Some(flat) = items.get(1).and_then(Value::as_array) else {
        return Ok(None);
    };
    let fields = flat
        .chunks(2)
        .map(
            |p| match (p.first().and_then(bytes), p.get(1).and_then(bytes)) {
                (Some(f), Some(v)) => Ok((f, v)),
                _ => Err(protocol("entry fields", v)),
            },
        )
        .collect::<Result<Vec<_>>>()?;
    Ok(Some(StreamEntry { id, fields }))
}

fn entries(v: &Value) -> Result<Vec<StreamEntry>> {
    let mut out = Vec::new();
    for e in v.as_array().ok_or_else(|| protocol("entries", v))? {
        if let Some(e) = entry(e)? {
            out.push(e);
        }
    }
    Ok(out)
}

/// The entries of an XREADGROUP reply for one stream (nil when there were none).
fn read_reply(v: &Value) -> Result<Vec<StreamEntry>> {
    match v {
        Value::Nil => Ok(Vec::new()),
        Value::Array(streams) => match streams.first().and_then(Value::as_array) {
            Some(pair) if pair.len() == 2 => entries(&pair[1]),
            _ => Err(protocol("XREADGROUP", v)),
        },
        Value::Map(pairs) => match pairs.first() {
            Some((_, list)) => entries(list),
            None => Ok(Vec::new()),
        },
        _ => Err(protocol("XREADGROUP", v)),
    }
}

impl StreamGroup {
    pub fn new(conn: Connection, stream: &str, group: &str) -> StreamGroup {
        StreamGroup {
            conn,
            stream: stream.to_string(),
            group: group.to_string(),
            script: Script::fixed(CLAIM_OR_READ),
        }
    }

    /// The script behind `claim_or_read`, for explorers that preload it.
    pub fn claim_or_read_script() -> Script {
        Script::fixed(CLAIM_OR_READ)
    }

    /// Creates the group (and the stream if missing), delivering entries after `start`
    /// (`"$"`: only entries added from now on; `"0"`: everything). False if it existed.
    pub async fn create(&self, start: &str) -> Result<bool> {
        let r = self
            .conn
            .cmd(&[
                "XGROUP",
                "CREATE",
                &self.stream,
                &self.group,
                start,
                "MKSTREAM",
            ])
            .await;
        match r {
            Ok(_) => Ok(true),
            Err(Error::Redis { code, .. }) if code == "BUSYGROUP" => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Up to `count` entries never delivered to the group, now pending for `consumer`.
    pub async fn read_new(&self, consumer: &str, count: usize) -> Result<Vec<StreamEntry>> {
        self.read_group(consumer, count, ">").await
    }

    /// Up to `count` of `consumer`'s own pending entries (delivered again: their delivery
    /// count goes up). Entries deleted from the stream meanwhile are left out.
    pub async fn read_pending(&self, consumer: &str, count: usize) -> Result<Vec<StreamEntry>> {
        self.read_group(consumer, count, "0").await
    }

    /// XREADGROUP of this group's stream from `id` (`>` for new entries, `0` for own pending).
    async fn read_group(&self, consumer: &str, count: usize, id: &str) -> Result<Vec<StreamEntry>> {
        let count = count.to_string();
        let v = self
            .conn
            .cmd(&[
                "XREADGROUP",
                "GROUP",
                &self.group,
                consumer,
                "COUNT",
                &count,
                "STREAMS",
                &self.stream,
                id,
            ])
            .await?;
        read_reply(&v)
    }

    /// Acknowledges entries; answers how many were pending (an entry acknowledged twice
    /// counts once).
    pub async fn ack(&self, ids: &[&str]) -> Result<u64> {
        let mut args = vec!["XACK", &self.stream, &self.group];
        args.extend_from_slice(ids);
        let v = self.conn.cmd(&args).await?;
        v.as_int()
            .map(|n| n as u64)
            .ok_or_else(|| protocol("XACK", &v))
    }

    /// Claims for `consumer` up to `count` pending entries idle for at least `min_idle`,
    /// oldest first, following XAUTOCLAIM's cursor to the end of the PEL.
    pub async fn claim_idle(
        &self,
        consumer: &str,
        min_idle: Duration,
        count: usize,
    ) -> Result<Vec<StreamEntry>> {
        let idle = min_idle.as_millis().to_string();
        let mut cursor = "0-0".to_string();
        let mut out = Vec::new();
        while out.len() < count {
            let want = (count - out.len()).to_string();
            let v = self
                .conn
                .cmd(&[
                    "XAUTOCLAIM",
                    &self.stream,
                    &self.group,
                    consumer,
                    &idle,
                    &cursor,
                    "COUNT",
                    &want,
                ])
                .await?;
            let items = v.as_array().ok_or_else(|| protocol("XAUTOCLAIM", &v))?;
            let next = items
                .first()
                .and_then(Value::as_str)
                .ok_or_else(|| protocol("XAUTOCLAIM cursor", &v))?
                .to_string();
            out.extend(entries(
                items.get(1).ok_or_else(|| protocol("XAUTOCLAIM", &v))?,
            )?);
            if next == "0-0" {
                break;
            }
            cursor = next;
        }
        Ok(out)
    }

    /// The worker's step: the oldest entry idle for `min_idle` if any, else one new entry,
    /// else None — atomically, in one script.
    pub async fn claim_or_read(
        &self,
        consumer: &str,
        min_idle: Duration,
    ) -> Result<Option<Delivery>> {
        let v = self
            .script
            .invoke(
                &self.conn,
                &[&self.stream],
                &[
                    self.group.clone(),
                    consumer.to_string(),
                    min_idle.as_millis().to_string(),
                ],
            )
            .await;
        let v = match v {
            Err(Error::Redis { code, message })
                if code == "ERR" && message.starts_with("invalid-") =>
            {
                return Err(Error::Invalid(message))
            }
            other => other?,
        };
        let items = v.as_array().ok_or_else(|| protocol("claim-or-read", &v))?;
        let kind = items.first().and_then(Value::as_str);
        if kind == Some("none") {
            return Ok(None);
        }
        let e = entry(&Value::Array(items[1..].to_vec()))?
            .ok_or_else(|| protocol("claim-or-read entry", &v))?;
        match kind {
            Some("claimed") => Ok(Some(Delivery::Claimed(e))),
            Some("new") => Ok(Some(Delivery::New(e))),
            _ => Err(protocol("claim-or-read", &v)),
        }
    }
}
