//! The debug commands.

use super::table::Command;

pub static COMMANDS: &[Command] = &[];
