//! The cluster bus's messages, in Redis's own binary layout (`clusterMsg` of Redis 7.0's
//! cluster.h): a 2256-byte header (signature "RCmb", length, version 1, ports, type,
//! epochs, the replication offset, the sender's id, its 16384-bit slot bitmap, its
//! primary's id, flags, state, message flags), then a body that depends on the type: gossip
//! entries of 104 bytes for PING, PONG and MEET, a node id for FAIL, an epoch, id and slot
//! bitmap for UPDATE, nothing for the failover messages (FAILOVER_AUTH_REQUEST and _ACK,
//! MFSTART: their header says it all). Every number is big endian.
//!
//! Why Redis's layout rather than a small redlab format: it is the one format a Redis
//! Cluster node speaks, so a redlab node and a redis-server node can meet (and a capture
//! of a real bus is something to test against); the fields Redis merges views with are
//! exactly the ones the layout carries, so nothing had to be invented; and its cost, a
//! 2 KB bitmap per message, is what Redis pays too.
//!
//! `decode` is the only door into a node from the bus, and it trusts nothing: the length
//! is checked against the type before any field is read, and names and addresses are
//! read as bounded, NUL-terminated fields.

/// The header's length: where a message's body starts.
pub const HEADER_LEN: usize = 2256;
/// One gossip entry (`clusterMsgDataGossip`).
pub const GOSSIP_LEN: usize = 104;
/// A node id.
pub const NAME_LEN: usize = 40;
/// The slot bitmap.
pub const SLOTS_LEN: usize = 16384 / 8;
/// An address field (NET_IP_STR_LEN).
const IP_LEN: usize = 46;
/// The longest message a node accepts: a header, 65535 gossip entries and room for
/// extensions. Longer is garbage, and the link is closed before anything is allocated.
pub const MAX_LEN: usize = HEADER_LEN + 65535 * GOSSIP_LEN + 65536;
/// The bytes that must arrive before a message's length is known.
pub const PREFIX_LEN: usize = 8;

/// Message types, as Redis numbers them.
pub const PING: u16 = 0;
pub const PONG: u16 = 1;
pub const MEET: u16 = 2;
pub const FAIL: u16 = 3;
/// A replica asks the primaries for their vote (header only).
pub const AUTH_REQUEST: u16 = 5;
/// A primary's vote (header only).
pub const AUTH_ACK: u16 = 6;
pub const UPDATE: u16 = 7;
/// A replica asks its primary to start a manual failover (header only).
pub const MFSTART: u16 = 8;
/// How many types Redis 7.0 has (the size of the per-type counters).
pub const TYPES: usize = 11;

/// Redis's names of the types, for CLUSTER INFO's counters.
pub const TYPE_NAMES: [&str; TYPES] = [
    "ping",
    "pong",
    "meet",
    "fail",
    "publish",
    "auth-req",
    "auth-ack",
    "update",
    "mfstart",
    "module",
    "publishshard",
];

/// Node flags, as Redis numbers them.
pub const F_MASTER: u16 = 1;
pub const F_SLAVE: u16 = 2;
pub const F_PFAIL: u16 = 4;
pub const F_FAIL: u16 = 8;
pub const F_MYSELF: u16 = 16;
pub const F_HANDSHAKE: u16 = 32;
pub const F_NOADDR: u16 = 64;
/// cluster-replica-no-failover on the sender: it never starts an automatic failover, and
/// its siblings leave it out of their ranks.
pub const F_NOFAILOVER: u16 = 512;

/// Message flags (`mflags[0]`), as Redis numbers them: the sender is a primary whose
/// clients are paused for a manual failover (its offset is final) ...
pub const MF_PAUSED: u8 = 1;
/// ... and a vote is asked for although the primary did not fail (manual failover).
pub const MF_FORCEACK: u8 = 2;

/// The header's fields redlab reads or writes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Header {
    pub typ: u16,
    pub port: u16,
    pub cport: u16,
    pub current_epoch: u64,
    pub config_epoch: u64,
    pub offset: u64,
    pub sender: String,
    /// The sender's slots (its primary's, for a replica): 2048 bytes, slot 0 in bit 0 of
    /// byte 0.
    pub slots: Vec<u8>,
    /// The sender's primary, None for a primary.
    pub replica_of: Option<String>,
    /// The address the sender announces; empty: take the connection's peer address.
    pub myip: String,
    pub flags: u16,
    /// The cluster state in the sender's view: 0 ok, 1 fail.
    pub state: u8,
    /// The first of the message flags (`MF_PAUSED`, `MF_FORCEACK`).
    pub mflags: u8,
}

/// A gossip entry: what the sender knows of another node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Gossip {
    pub name: String,
    /// Seconds, as Redis sends them.
    pub ping_sent: u32,
    pub pong_received: u32,
    pub ip: String,
    pub port: u16,
    pub cport: u16,
    pub flags: u16,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Body {
    /// PING, PONG, MEET.
    Gossip(Vec<Gossip>),
    /// FAIL: this node failed.
    Fail(String),
    /// UPDATE: this node owns these slots at this epoch.
    Update {
        config_epoch: u64,
        name: String,
        slots: Vec<u8>,
    },
    /// No body: the failover messages, and types redlab does not act on (PUBLISH, module
    /// messages), which are read and ignored.
    Other,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Msg {
    pub header: Header,
    pub body: Body,
}

/// Whether `slot` is set in a bitmap.
pub fn has_slot(bitmap: &[u8], slot: u16) -> bool {
    bitmap
        .get(slot as usize / 8)
        .is_some_and(|b| b & (1 << (slot % 8)) != 0)
}

/// Sets `slot` in a bitmap of `SLOTS_LEN` bytes.
pub fn set_slot(bitmap: &mut [u8], slot: u16) {
    if let Some(b) = bitmap.get_mut(slot as usize / 8) {
        *b |= 1 << (slot % 8);
    }
}

fn put_u16(out: &mut [u8], at: usize, v: u16) {
    out[at..at + 2].copy_from_slice(&v.to_be_bytes());
}

fn put_u32(out: &mut [u8], at: usize, v: u32) {
    out[at..at + 4].copy_from_slice(&v.to_be_bytes());
}

fn put_u64(out: &mut [u8], at: usize, v: u64) {
    out[at..at + 8].copy_from_slice(&v.to_be_bytes());
}

/// Copies `s` into a fixed field, truncated, the rest left NUL.
fn put_str(out: &mut [u8], at: usize, len: usize, s: &str) {
    let b = s.as_bytes();
    let n = b.len().min(len);
    out[at..at + n].copy_from_slice(&b[..n]);
}

fn get_u16(b: &[u8], at: usize) -> u16 {
    u16::from_be_bytes([b[at], b[at + 1]])
}

fn get_u32(b: &[u8], at: usize) -> u32 {
    u32::from_be_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]])
}

fn get_u64(b: &[u8], at: usize) -> u64 {
    let mut a = [0u8; 8];
    a.copy_from_slice(&b[at..at + 8]);
    u64::from_be_bytes(a)
}

/// A fixed field up to its first NUL, as text.
fn get_str(b: &[u8], at: usize, len: usize) -> String {
    let field = &b[at..at + len];
    let end = field.iter().position(|&c| c == 0).unwrap_or(len);
    String::from_utf8_lossy(&field[..end]).into_owned()
}

/// Whether a name field is all NUL (Redis's CLUSTER_NODE_NULL_NAME: no primary).
fn is_null_name(b: &[u8], at: usize) -> bool {
    b[at..at + NAME_LEN].iter().all(|&c| c == 0)
}

/// Encodes a message with its length filled in.
pub fn encode(msg: &Msg) -> Vec<u8> {
    let h = &msg.header;
    let body_len = match &msg.body {
        Body::Gossip(g) => g.len() * GOSSIP_LEN,
        Body::Fail(_) => NAME_LEN,
        Body::Update { .. } => 8 + NAME_LEN + SLOTS_LEN,
        Body::Other => 0,
    };
    let mut out = vec![0u8; HEADER_LEN + body_len];
    out[0..4].copy_from_slice(b"RCmb");
    let total = out.len() as u32;
    put_u32(&mut out, 4, total);
    put_u16(&mut out, 8, 1);
    put_u16(&mut out, 10, h.port);
    put_u16(&mut out, 12, h.typ);
    let count = match &msg.body {
        Body::Gossip(g) => g.len().min(u16::MAX as usize) as u16,
        _ => 0,
    };
    put_u16(&mut out, 14, count);
    put_u64(&mut out, 16, h.current_epoch);
    put_u64(&mut out, 24, h.config_epoch);
    put_u64(&mut out, 32, h.offset);
    put_str(&mut out, 40, NAME_LEN, &h.sender);
    let n = h.slots.len().min(SLOTS_LEN);
    out[80..80 + n].copy_from_slice(&h.slots[..n]);
    if let Some(p) = &h.replica_of {
        put_str(&mut out, 2128, NAME_LEN, p);
    }
    put_str(&mut out, 2168, IP_LEN, &h.myip);
    // 2214: extensions (none), 2216..2246 unused, 2246: pport (no TLS: 0).
    put_u16(&mut out, 2248, h.cport);
    put_u16(&mut out, 2250, h.flags);
    out[2252] = h.state;
    out[2253] = h.mflags;
    let mut at = HEADER_LEN;
    match &msg.body {
        Body::Gossip(entries) => {
            for g in entries.iter().take(count as usize) {
                put_str(&mut out, at, NAME_LEN, &g.name);
                put_u32(&mut out, at + 40, g.ping_sent);
                put_u32(&mut out, at + 44, g.pong_received);
                put_str(&mut out, at + 48, IP_LEN, &g.ip);
                put_u16(&mut out, at + 94, g.port);
                put_u16(&mut out, at + 96, g.cport);
                put_u16(&mut out, at + 98, g.flags);
                at += GOSSIP_LEN;
            }
        }
        Body::Fail(name) => put_str(&mut out, at, NAME_LEN, name),
        Body::Update {
            config_epoch,
            name,
            slots,
        } => {
            put_u64(&mut out, at, *config_epoch);
            put_str(&mut out, at + 8, NAME_LEN, name);
            let n = slots.len().min(SLOTS_LEN);
            out[at + 48..at + 48 + n].copy_from_slice(&slots[..n]);
        }
        Body::Other => {}
    }
    out
}

/// The total length a message announces in its first 8 bytes, or why the link must close
/// (a wrong signature, or a length outside [HEADER_LEN, MAX_LEN]).
pub fn announced_len(prefix: &[u8]) -> Result<usize, &'static str> {
    if prefix.len() < PREFIX_LEN || &prefix[0..4] != b"RCmb" {
        return Err("bad signature");
    }
    let len = get_u32(prefix, 4) as usize;
    if !(HEADER_LEN..=MAX_LEN).contains(&len) {
        return Err("bad length");
    }
    Ok(len)
}

/// The type of an encoded message (None when too short to say).
pub fn type_of(b: &[u8]) -> Option<u16> {
    (b.len() >= 14).then(|| get_u16(b, 12))
}

/// Decodes one whole message (as `announced_len` framed it), or says why it is invalid, as
/// Redis's clusterIsValidPacket does: the version must be 1 and the length must hold what
/// the type says is there.
pub fn decode(b: &[u8]) -> Result<Msg, &'static str> {
    let len = announced_len(b)?;
    if len != b.len() {
        return Err("length mismatch");
    }
    if get_u16(b, 8) != 1 {
        return Err("unknown protocol version");
    }
    let typ = get_u16(b, 12);
    let count = get_u16(b, 14) as usize;
    let needed = match typ {
        PING | PONG | MEET => HEADER_LEN + count * GOSSIP_LEN,
        FAIL => HEADER_LEN + NAME_LEN,
        UPDATE => HEADER_LEN + 8 + NAME_LEN + SLOTS_LEN,
        _ => HEADER_LEN,
    };
    // PING, PONG and MEET may carry extensions after the gossip (Redis 7's hostname):
    // longer is allowed, shorter is not.
    if b.len() < needed {
        return Err("too short for its type");
    }
    let header = Header {
        typ,
        port: get_u16(b, 10),
        cport: get_u16(b, 2248),
        current_epoch: get_u64(b, 16),
        config_epoch: get_u64(b, 24),
        offset: get_u64(b, 32),
        sender: get_str(b, 40, NAME_LEN),
        slots: b[80..80 + SLOTS_LEN].to_vec(),
        replica_of: (!is_null_name(b, 2128)).then(|| get_str(b, 2128, NAME_LEN)),
        myip: get_str(b, 2168, IP_LEN),
        flags: get_u16(b, 2250),
        state: b[2252],
        mflags: b[2253],
    };
    let at = HEADER_LEN;
    let body = match typ {
        PING | PONG | MEET => Body::Gossip(
            (0..count)
                .map(|i| {
                    let g = at + i * GOSSIP_LEN;
                    Gossip {
                        name: get_str(b, g, NAME_LEN),
                        ping_sent: get_u32(b, g + 40),
                        pong_received: get_u32(b, g + 44),
                        ip: get_str(b, g + 48, IP_LEN),
                        port: get_u16(b, g + 94),
                        cport: get_u16(b, g + 96),
                        flags: get_u16(b, g + 98),
                    }
                })
                .collect(),
        ),
        FAIL => Body::Fail(get_str(b, at, NAME_LEN)),
        UPDATE => Body::Update {
            config_epoch: get_u64(b, at),
            name: get_str(b, at + 8, NAME_LEN),
            slots: b[at + 48..at + 48 + SLOTS_LEN].to_vec(),
        },
        _ => Body::Other,
    };
    Ok(Msg { header, body })
}

/// Whether `id` is a node id as Redis checks one (verifyClusterNodeId): 40 lowercase hex
/// digits.
pub fn valid_name(id: &str) -> bool {
    id.len() == NAME_LEN
        && id
            .bytes()
            .all(|c| c.is_ascii_digit() || (b'a'..=b'f').contains(&c))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(typ: u16) -> Header {
        let mut slots = vec![0u8; SLOTS_LEN];
        set_slot(&mut slots, 0);
        set_slot(&mut slots, 16383);
        Header {
            typ,
            port: 7000,
            cport: 17000,
            current_epoch: 5,
            config_epoch: 3,
            offset: 99,
            sender: "a".repeat(40),
            slots,
            replica_of: Some("b".repeat(40)),
            myip: String::new(),
            flags: F_SLAVE,
            state: 0,
            mflags: MF_FORCEACK,
        }
    }

    #[test]
    fn round_trips_every_body() {
        let bodies = [
            Body::Gossip(vec![Gossip {
                name: "c".repeat(40),
                ping_sent: 1,
                pong_received: 2,
                ip: "127.0.0.1".into(),
                port: 7001,
                cport: 17001,
                flags: F_MASTER | F_PFAIL,
            }]),
            Body::Fail("d".repeat(40)),
            Body::Update {
                config_epoch: 7,
                name: "e".repeat(40),
                slots: vec![0xff; SLOTS_LEN],
            },
        ];
        let bodies = bodies
            .into_iter()
            .chain(std::iter::repeat_n(Body::Other, 3));
        for (typ, body) in [PING, FAIL, UPDATE, AUTH_REQUEST, AUTH_ACK, MFSTART]
            .into_iter()
            .zip(bodies)
        {
            let msg = Msg {
                header: header(typ),
                body,
            };
            let bytes = encode(&msg);
            assert_eq!(announced_len(&bytes), Ok(bytes.len()));
            assert_eq!(decode(&bytes), Ok(msg));
        }
    }

    #[test]
    fn the_layout_is_redis_s() {
        // Offsets of clusterMsg's fields in Redis 7.0 (its static asserts), read back.
        let bytes = encode(&Msg {
            header: header(MEET),
            body: Body::Gossip(Vec::new()),
        });
        assert_eq!(bytes.len(), 2256);
        assert_eq!(&bytes[0..4], b"RCmb");
        assert_eq!(get_u16(&bytes, 12), MEET);
        assert_eq!(&bytes[40..80], "a".repeat(40).as_bytes());
        assert_eq!(bytes[80], 1);
        assert_eq!(bytes[80 + 2047], 0x80);
        assert_eq!(&bytes[2128..2168], "b".repeat(40).as_bytes());
        assert_eq!(get_u16(&bytes, 2248), 17000);
        assert_eq!(get_u16(&bytes, 2250), F_SLAVE);
        assert_eq!(bytes[2253], MF_FORCEACK);
        // The failover messages are a bare header.
        let ack = encode(&Msg {
            header: header(AUTH_ACK),
            body: Body::Other,
        });
        assert_eq!(ack.len(), HEADER_LEN);
        assert_eq!(get_u16(&ack, 12), 6);
    }

    #[test]
    fn garbage_is_refused_not_trusted() {
        assert!(announced_len(b"RCmb").is_err());
        assert!(announced_len(b"XXXX\0\0\x08\xd0").is_err());
        let mut huge = b"RCmb".to_vec();
        huge.extend_from_slice(&u32::MAX.to_be_bytes());
        assert_eq!(announced_len(&huge), Err("bad length"));
        // A PING that claims more gossip than it carries.
        let mut bytes = encode(&Msg {
            header: header(PING),
            body: Body::Gossip(Vec::new()),
        });
        put_u16(&mut bytes, 14, 3);
        assert_eq!(decode(&bytes), Err("too short for its type"));
        // A wrong version.
        put_u16(&mut bytes, 14, 0);
        put_u16(&mut bytes, 8, 2);
        assert!(decode(&bytes).is_err());
    }
}
