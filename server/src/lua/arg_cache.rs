//! redis.call's recurring string arguments, found by the identity of their Lua strings.
//!
//! A script names the same command and keys call after call (`redis.call('GET', KEYS[1])`),
//! and every Lua string with the same bytes is the same object (Lua 5.1 interns them all), so
//! the address of a string's bytes names its content as long as the string lives. Each
//! runtime keeps a small table from that address to a shared `Bytes` of the argument, and
//! keeps every string it remembers alive by storing it in an anchor table in the registry:
//! a remembered address can then never be reused by another string. A hit costs a multiply,
//! a compare and a reference count, where hashing and comparing the bytes in `ArgBuffer`
//! cost about 120 instructions per argument (callgrind, `cargo bench --bench eval`: eight
//! arguments per EVALSHA of its update path).
//!
//! As in `ArgBuffer`, an argument is remembered at its second sighting only, so a value
//! passed once (a fresh ARGV) costs a copy, as before, and pushes nothing out. The table
//! belongs to one Lua state and goes with it: an address means nothing in another state, or
//! after its state is closed.

use std::ffi::c_int;

use bytes::Bytes;

use super::ffi::*;

/// Slots of the table (a power of two); also the anchor table's array size.
const SLOTS: usize = 32;
/// The longest argument remembered (a SHA1 in hex fits); longer ones are copied each time.
const UP_TO: usize = 48;

#[derive(Default)]
struct Slot {
    /// Address of the remembered string's bytes (0: none), anchored at this slot.
    at: usize,
    kept: Option<Bytes>,
    /// Address last seen at this slot and not remembered: only a hint (that string may be
    /// gone), so a match only makes the current string remembered, by its own bytes.
    seen: usize,
}

pub struct ArgCache {
    /// An array, not a Vec: the masked index needs no bounds check.
    slots: [Slot; SLOTS],
    /// Registry reference of the anchor table (an array of `SLOTS` slots).
    anchor_ref: c_int,
}

impl ArgCache {
    /// A table for the state `l`, with its anchor table made in the registry.
    ///
    /// # Safety
    /// `l` is a live state being built (outside protected mode, with the memory limit off: an
    /// allocation fails only on a real out-of-memory, where Lua aborts).
    pub unsafe fn new(l: *mut lua_State) -> ArgCache {
        // SAFETY: per the contract; the table is pushed and popped by luaL_ref.
        let anchor_ref = unsafe {
            lua_createtable(l, SLOTS as c_int, 0);
            luaL_ref(l, LUA_REGISTRYINDEX)
        };
        ArgCache {
            slots: std::array::from_fn(|_| Slot::default()),
            anchor_ref,
        }
    }

    /// The string argument at stack slot `idx`, whose `len` bytes are at `p`, as `Bytes`.
    ///
    /// # Safety
    /// `l` is this table's state, inside a C function whose stack slot `idx` holds the string
    /// whose bytes are at `p` (from `redlab_string_at`). Nothing here raises: the anchor
    /// table was made with an array part of `SLOTS` slots, which only a new key in its hash
    /// part could shrink (it never gets one), so storing into it allocates nothing; and the
    /// two pushes fit in the LUA_MINSTACK slots a C function starts with.
    #[inline]
    pub unsafe fn get(&mut self, l: *mut lua_State, idx: c_int, p: *const u8, len: usize) -> Bytes {
        let at = p as usize;
        let i =
            (((at as u64) >> 3).wrapping_mul(0x9e37_79b9_7f4a_7c15) >> 59) as usize & (SLOTS - 1);
        let slot = &self.slots[i];
        if slot.at == at {
            if let Some(kept) = &slot.kept {
                return kept.clone();
            }
        }
        // SAFETY: as for this function.
        unsafe { self.miss(l, idx, p, len, i) }
    }

    /// `get` of a string not remembered, whose slot is `i`: a copy, remembered when it is
    /// the one last seen at that slot.
    ///
    /// # Safety
    /// As `get`'s.
    #[cold]
    unsafe fn miss(
        &mut self,
        l: *mut lua_State,
        idx: c_int,
        p: *const u8,
        len: usize,
        i: usize,
    ) -> Bytes {
        // SAFETY: `p` points at `len` bytes of a string on the stack (contract), alive for
        // this call.
        let b = Bytes::copy_from_slice(unsafe { std::slice::from_raw_parts(p, len) });
        let at = p as usize;
        let slot = &mut self.slots[i];
        if len > UP_TO {
            return b;
        }
        if slot.seen != at {
            slot.seen = at;
            return b;
        }
        // Second sighting: remembered, and its string anchored at this slot (the string
        // anchored there before, if any, may now be collected along with its entry).
        // SAFETY: per the contract; the anchor table is a registry reference this table
        // made, slot i + 1 lies in its array part, and the stack is balanced on return.
        unsafe {
            lua_rawgeti_(l, LUA_REGISTRYINDEX, self.anchor_ref);
            lua_pushvalue(l, idx);
            lua_rawseti_(l, -2, i as c_int + 1);
            lua_pop(l, 1);
        }
        slot.at = at;
        slot.kept = Some(b.clone());
        slot.seen = 0;
        b
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lua::runtime::{Kind, Runtime};

    /// `get` of the string `s` pushed on `rt`'s stack (then popped).
    fn arg(rt: &Runtime, cache: &mut ArgCache, s: &[u8]) -> Bytes {
        // SAFETY: `rt` owns a live state; one string is pushed and popped; its bytes are
        // read while it is on the stack.
        unsafe {
            push_bytes(rt.l, s);
            let mut len = 0usize;
            let p = redlab_string_at(rt.l, -1, &mut len) as *const u8;
            let b = cache.get(rt.l, lua_gettop(rt.l), p, len);
            lua_pop(rt.l, 1);
            b
        }
    }

    #[test]
    fn a_remembered_string_survives_collections_and_others_read_as_themselves() {
        let rt = Runtime::new(Kind::Eval, 1 << 24);
        // SAFETY: the test's own state, outside any script.
        let mut cache = unsafe { ArgCache::new(rt.l) };
        for _ in 0..3 {
            assert_eq!(arg(&rt, &mut cache, b"GET"), "GET");
        }
        // Many short-lived strings, collected between uses, must never be taken for a
        // remembered one whose address they might reuse.
        for round in 0..200 {
            let s = format!("value-{round}");
            assert_eq!(arg(&rt, &mut cache, s.as_bytes()), s.as_bytes());
            assert_eq!(arg(&rt, &mut cache, s.as_bytes()), s.as_bytes());
            rt.collect_garbage();
            assert_eq!(arg(&rt, &mut cache, b"GET"), "GET");
            let long = "x".repeat(UP_TO + 1 + round % 3);
            assert_eq!(arg(&rt, &mut cache, long.as_bytes()), long.as_bytes());
        }
        // The remembered GET is shared, not copied again.
        let a = arg(&rt, &mut cache, b"GET");
        let b = arg(&rt, &mut cache, b"GET");
        assert_eq!(a.as_ptr(), b.as_ptr());
    }
}
