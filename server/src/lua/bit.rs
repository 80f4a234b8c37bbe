//! placeholder

use std::ffi::c_int;

use super::ffi::*;

pub unsafe fn open(l: *mut lua_State, g: c_int) {
    lua_newtable(l);
    set_field(l, g, "bit");
}
