//! The RDB file on disk, for the redlab-server binary: `dir`/`dbfilename` written by SAVE,
//! BGSAVE, DEBUG RELOAD and a shutdown with save points, and read back at start while the
//! server already answers clients (`loading`), as redis-server does.
//!
//! Only a server whose `Config::rdb_on_disk` is set touches the disk (the binary sets it);
//! in-process servers keep "the RDB file" as an image in memory (`cmd::debug_reload`), so a
//! test process never leaves a dump.rdb in its working directory (see DIFFERENCES.md).

pub(crate) mod loading;
pub(crate) mod shutdown;

use std::path::PathBuf;

use crate::config::Config;
use crate::engine::Engine;

/// Where the RDB file is: `dbfilename` in `dir` (the working directory when `dir` is
/// unset). redis-server changes into `dir` at start; redlab keeps its working directory and
/// joins the two, which names the same file.
pub(crate) fn rdb_path(config: &Config) -> PathBuf {
    let name = config.get_by_name("dbfilename").unwrap_or_default();
    match config.extra.get("dir").filter(|d| !d.is_empty()) {
        Some(dir) => PathBuf::from(dir).join(name),
        None => PathBuf::from(name),
    }
}

/// Whether `save` has save points (`save ""` turns saving off).
pub(crate) fn has_save_points(config: &Config) -> bool {
    config
        .get_by_name("save")
        .is_some_and(|v| !v.trim().is_empty())
}

/// Writes the image SAVE just took (`Engine::saved_image`) to the RDB file, through a
/// temporary file renamed over it as Redis does, so a crash mid-write never leaves half a
/// file under the real name. Nothing for an in-process server. The error is logged with
/// Redis's line.
pub(crate) fn write_image(e: &Engine) -> Result<(), ()> {
    if !e.config.rdb_on_disk {
        return Ok(());
    }
    let Some(image) = e.saved_image.as_deref() else {
        return Ok(());
    };
    let path = rdb_path(&e.config);
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("."));
    let temp_name = format!("temp-{}.rdb", std::process::id());
    let temp = dir.join(&temp_name);
    let root = || {
        std::fs::canonicalize(&dir)
            .map(|d| d.display().to_string())
            .unwrap_or_else(|_| dir.display().to_string())
    };
    if let Err(err) = std::fs::write(&temp, image) {
        tracing::warn!(
            "Failed opening the temp RDB file {} (in server root dir {}) for saving: {}",
            temp_name,
            root(),
            crate::errors::strerror(&err)
        );
        let _ = std::fs::remove_file(&temp);
        return Err(());
    }
    if let Err(err) = std::fs::rename(&temp, &path) {
        tracing::warn!(
            "Error moving temp DB file {} on the final destination {} (in server root dir {}): {}",
            temp_name,
            path.file_name().unwrap_or_default().to_string_lossy(),
            root(),
            crate::errors::strerror(&err)
        );
        let _ = std::fs::remove_file(&temp);
        return Err(());
    }
    tracing::info!("DB saved on disk");
    Ok(())
}
