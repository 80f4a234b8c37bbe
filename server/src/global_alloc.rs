//! `MiMalloc`: mimalloc as Rust's global allocator, for the programs that serve redlab over
//! TCP (the `redlab-server` binary, the throughput benches) and for any test binary that
//! wants it (`#[global_allocator] static A: redlab_server::MiMalloc = redlab_server::MiMalloc;`).
//!
//! A command allocates a handful of small blocks (its arguments, the reply, the output
//! buffer) and frees them straight away. glibc's malloc spent up to a tenth of a simple
//! command's CPU on that, and SORT's thousand element copies sent it into
//! `malloc_consolidate`; mimalloc's per-size free lists serve the same requests in a few
//! instructions (Redis links jemalloc for the same reason). The library itself does not set
//! the global allocator: the program that links it decides.

use std::alloc::{GlobalAlloc, Layout};
use std::ffi::c_void;

use libmimalloc_sys::{
    mi_free, mi_malloc, mi_malloc_aligned, mi_realloc, mi_realloc_aligned, mi_zalloc,
    mi_zalloc_aligned,
};

/// The global allocator over mimalloc (see the module's documentation).
pub struct MiMalloc;

/// The alignment every mimalloc block of at least this size has without asking
/// (MI_MAX_ALIGN_SIZE): such layouts take the plain entry points, which skip the aligned
/// ones' checks (about half the instructions of a small allocation). The test
/// `blocks_have_the_alignment_asked_for` holds mimalloc to it, sizes that are not
/// multiples of 16 included (hashbrown asks for those).
const PLAIN_ALIGN: usize = 16;

/// Whether `mi_malloc` and friends already give `layout`'s alignment.
fn plain(layout: &Layout) -> bool {
    layout.align() <= PLAIN_ALIGN && layout.align() <= layout.size()
}

// SAFETY: every method forwards to mimalloc with the layout's size, and its alignment where
// the plain functions would not already give it (`plain`); they return null on failure or a
// block of at least that size and alignment; `dealloc` and `realloc` receive only pointers
// this allocator returned, as GlobalAlloc's contract guarantees, and mimalloc frees or
// resizes any block it handed out.
unsafe impl GlobalAlloc for MiMalloc {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: see the impl's comment.
        unsafe {
            if plain(&layout) {
                mi_malloc(layout.size()) as *mut u8
            } else {
                mi_malloc_aligned(layout.size(), layout.align()) as *mut u8
            }
        }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: see the impl's comment.
        unsafe {
            if plain(&layout) {
                mi_zalloc(layout.size()) as *mut u8
            } else {
                mi_zalloc_aligned(layout.size(), layout.align()) as *mut u8
            }
        }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, _layout: Layout) {
        // SAFETY: see the impl's comment.
        unsafe { mi_free(ptr as *mut c_void) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: see the impl's comment; the new size keeps a plain layout plain only when
        // it is at least the alignment too.
        unsafe {
            if layout.align() <= PLAIN_ALIGN && layout.align() <= new_size {
                mi_realloc(ptr as *mut c_void, new_size) as *mut u8
            } else {
                mi_realloc_aligned(ptr as *mut c_void, new_size, layout.align()) as *mut u8
            }
        }
    }
}

/// INFO's `mem_allocator`: `mimalloc-<version>` when this process's global allocator is
/// `MiMalloc` (the `redlab-server` binary), else `libc` (a test binary that links the
/// library keeps Rust's default, the system allocator). Asked of mimalloc itself, so a
/// program that installs `MiMalloc` needs no extra step to be described right.
pub fn allocator_name() -> &'static str {
    static NAME: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    NAME.get_or_init(|| {
        let probe = Box::new(0u64);
        let at = &*probe as *const u64 as *const c_void;
        // SAFETY: mi_is_in_heap_region only compares the address with mimalloc's reserved
        // regions; it neither reads nor frees the block.
        if !unsafe { libmimalloc_sys::mi_is_in_heap_region(at) } {
            return "libc".to_string();
        }
        // SAFETY: a plain query of the linked library's version number.
        let v = unsafe { libmimalloc_sys::mi_version() };
        format!("mimalloc-{}.{}.{}", v / 100, v / 10 % 10, v % 10)
    })
}

#[cfg(test)]
mod tests {
    /// A test binary keeps the system allocator: INFO must not claim mimalloc there.
    #[test]
    fn under_the_system_allocator_the_name_is_libc() {
        assert_eq!(super::allocator_name(), "libc");
    }

    /// Every block has the layout's alignment, for sizes that are not multiples of it too
    /// (hashbrown's tables ask for 16-byte alignment with such sizes).
    #[test]
    fn blocks_have_the_alignment_asked_for() {
        use std::alloc::{GlobalAlloc, Layout};
        let a = super::MiMalloc;
        for align in [1, 2, 4, 8, 16, 32, 64] {
            for size in (align..400).step_by(4) {
                let layout = Layout::from_size_align(size, align).expect("valid layout");
                // Several blocks of one size class, so odd and even slots both come up.
                let blocks: Vec<*mut u8> = (0..8)
                    // SAFETY: the layout has a non-zero size.
                    .map(|_| unsafe { a.alloc(layout) })
                    .collect();
                for &p in &blocks {
                    assert!(!p.is_null());
                    assert_eq!(p as usize % align, 0, "size {size} align {align}");
                }
                for p in blocks {
                    // SAFETY: `p` came from this allocator with this layout.
                    unsafe { a.dealloc(p, layout) };
                }
            }
        }
    }
}
