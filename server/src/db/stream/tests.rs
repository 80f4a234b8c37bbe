use super::*;

fn add(s: &mut Stream, ms: u64, fields: &[(&[u8], &[u8])]) {
    let id = StreamId::new(ms, 0);
    s.append(id, fields, 100, 4096);
}

#[test]
fn ranges_cross_nodes_both_ways() {
    let mut s = Stream::new();
    for i in 1..=250u64 {
        add(&mut s, i, &[(b"f", format!("v{i}").as_bytes())]);
    }
    assert_eq!(s.node_count(), 3);
    let all = s.range(StreamId::MIN, StreamId::MAX, 0, false);
    assert_eq!(all.len(), 250);
    assert_eq!(all[99].1, vec![(b"f".to_vec(), b"v100".to_vec())]);
    let back = s.range(StreamId::new(95, 0), StreamId::new(105, 0), 3, true);
    let ids: Vec<u64> = back.iter().map(|e| e.0.ms).collect();
    assert_eq!(ids, vec![105, 104, 103]);
    assert_eq!(s.first_id(), StreamId::new(1, 0));
    assert_eq!(s.last_valid_id(), StreamId::new(250, 0));
}

#[test]
fn samefields_and_mixed_entries_decode() {
    let mut s = Stream::new();
    add(&mut s, 1, &[(b"a", b"1"), (b"b", b"x")]);
    add(&mut s, 2, &[(b"a", b"-7"), (b"b", b"y")]);
    add(&mut s, 3, &[(b"c", b"z")]);
    assert_eq!(
        s.get(StreamId::new(2, 0)).unwrap(),
        vec![
            (b"a".to_vec(), b"-7".to_vec()),
            (b"b".to_vec(), b"y".to_vec())
        ]
    );
    assert_eq!(
        s.get(StreamId::new(3, 0)).unwrap(),
        vec![(b"c".to_vec(), b"z".to_vec())]
    );
}

#[test]
fn delete_and_trim() {
    let mut s = Stream::new();
    for i in 1..=250u64 {
        add(&mut s, i, &[(b"f", b"v")]);
    }
    assert!(s.delete(StreamId::new(1, 0)));
    assert!(!s.delete(StreamId::new(1, 0)));
    assert_eq!(s.first_id(), StreamId::new(2, 0));
    assert_eq!(s.max_deleted_id, StreamId::new(1, 0));
    // Approximate: only whole nodes go.
    assert_eq!(s.trim(Trim::MaxLen(120), true, 0), 99);
    assert_eq!(s.len(), 150);
    assert_eq!(s.trim(Trim::MaxLen(120), false, 0), 30);
    assert_eq!(s.first_id(), StreamId::new(131, 0));
    assert_eq!(s.trim(Trim::MinId(StreamId::new(200, 0)), false, 0), 69);
    assert_eq!(s.len(), 51);
}

#[test]
fn radix_node_count() {
    let mut s = Stream::new();
    assert_eq!(s.radix_nodes(), 1);
    add(&mut s, 1, &[(b"f", b"v")]);
    assert_eq!(s.radix_nodes(), 2);
}
