//! FUNCTION libraries.

use super::ffi::*;
use crate::lua_cfn;

#[derive(Default)]
pub struct Libraries {}

unsafe fn register_function_body(_l: *mut lua_State) -> CResult {
    Ok(0)
}
lua_cfn!(register_function, register_function_body);
