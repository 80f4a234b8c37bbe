//! Shutting down as redis-server does (its prepareForShutdown and finishShutdown): SHUTDOWN
//! and the SIGTERM/SIGINT the binary receives both end here, and both save the RDB file
//! when save points are configured, unless told NOSAVE.

use super::{has_save_points, write_image};
use crate::engine::Engine;

/// SHUTDOWN's options, or those `shutdown-on-sigterm` / `shutdown-on-sigint` give a signal.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct ShutdownFlags {
    pub save: bool,
    pub nosave: bool,
    pub now: bool,
    pub force: bool,
}

impl ShutdownFlags {
    /// A `shutdown-on-sig*` value: `default`, or any of save, nosave, now and force.
    pub(crate) fn from_config(value: &str) -> ShutdownFlags {
        let mut f = ShutdownFlags::default();
        for word in value.split_whitespace() {
            match word {
                "save" => f.save = true,
                "nosave" => f.nosave = true,
                "now" => f.now = true,
                "force" => f.force = true,
                _ => {}
            }
        }
        f
    }
}

/// Ok when the server may stop now: the RDB file is saved if it has to be (save points and
/// no NOSAVE, or SAVE). A failed save keeps the server running unless FORCE, as in Redis.
/// While loading nothing is saved: a half-read dataset must not replace the file.
pub(crate) fn prepare(e: &mut Engine, mut flags: ShutdownFlags) -> Result<(), ()> {
    if e.is_loading() {
        flags.save = false;
        flags.nosave = true;
    }
    tracing::warn!("User requested shutdown...");
    let save = (has_save_points(&e.config) && !flags.nosave) || flags.save;
    if save && e.config.rdb_on_disk {
        tracing::info!("Saving the final RDB snapshot before exiting.");
        crate::cmd::debug_reload::take_image(e);
        if write_image(e).is_err() {
            if flags.force {
                tracing::warn!("Error trying to save the DB. Exit anyway.");
            } else {
                tracing::warn!("Error trying to save the DB, can't exit.");
                tracing::warn!(
                    "Errors trying to shut down the server. Check the logs for more information."
                );
                return Err(());
            }
        }
    }
    Ok(())
}

/// A SIGTERM or SIGINT the binary received (Redis's serverCron seeing shutdown_asap): shuts
/// down with the flags `shutdown-on-sigterm` / `shutdown-on-sigint` give. True when the
/// server is to stop; false when saving failed and it keeps running.
pub(crate) fn on_signal(e: &mut Engine, sigint: bool) -> bool {
    let param = if sigint {
        "shutdown-on-sigint"
    } else {
        "shutdown-on-sigterm"
    };
    let flags = ShutdownFlags::from_config(&e.config.get_by_name(param).unwrap_or_default());
    if prepare(e, flags).is_err() {
        return false;
    }
    e.shutdown_requested = true;
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signal_flags_read_as_redis_reads_them() {
        assert_eq!(
            ShutdownFlags::from_config("default"),
            ShutdownFlags::default()
        );
        let f = ShutdownFlags::from_config("nosave now");
        assert!(f.nosave && f.now && !f.save && !f.force);
        assert!(ShutdownFlags::from_config("save force").force);
    }
}
