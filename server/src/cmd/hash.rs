//! The hash commands.

use super::table::Command;

pub static COMMANDS: &[Command] = &[];
