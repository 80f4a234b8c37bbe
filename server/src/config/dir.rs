//! `dir`, the server's working directory. redis-server chdir()s into it when the parameter
//! is set (at start or by CONFIG SET) and reports getcwd(), so a relative value is taken
//! from the directory it was in, symbolic links are resolved, and a value that is no
//! directory is refused with the OS's reason. redlab cannot change the working directory of
//! the test process it lives in, so it keeps the absolute path chdir() would have given and
//! joins file names to it (`persist::rdb_path`, the aclfile): the same files, and the same
//! CONFIG GET answer.

use std::path::{Path, PathBuf};

/// The absolute directory that setting `dir` to `value` moves to, from `current` (the
/// directory `dir` holds now; the process's working directory while it was never set).
/// Err is the reason Redis gives (strerror of chdir's failure).
pub(crate) fn resolve(current: Option<&str>, value: &str) -> Result<String, String> {
    if value.is_empty() {
        // chdir("") fails with ENOENT.
        return Err(strerror(&std::io::Error::from_raw_os_error(2)));
    }
    let path = Path::new(value);
    let path = if path.is_absolute() {
        path.to_path_buf()
    } else {
        let base = match current {
            Some(dir) => PathBuf::from(dir),
            None => std::env::current_dir().map_err(|e| strerror(&e))?,
        };
        base.join(path)
    };
    let resolved = std::fs::canonicalize(&path).map_err(|e| strerror(&e))?;
    if !resolved.is_dir() {
        // ENOTDIR, as chdir() reports for a file.
        return Err("Not a directory".to_string());
    }
    Ok(resolved.display().to_string())
}

fn strerror(err: &std::io::Error) -> String {
    crate::errors::strerror(err)
}

#[cfg(test)]
mod tests {
    use super::resolve;

    #[test]
    fn a_value_is_resolved_as_chdir_would_and_refused_with_its_reason() {
        let root = std::env::temp_dir().join(format!("redlab-dir-{}", std::process::id()));
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("file"), b"").unwrap();
        let root_abs = std::fs::canonicalize(&root).unwrap().display().to_string();
        let sub = resolve(Some(&root_abs), "sub/../sub").unwrap();
        assert_eq!(sub, format!("{root_abs}/sub"));
        // Relative to where the server is now, as a second chdir() is.
        assert_eq!(resolve(Some(&sub), "..").unwrap(), root_abs);
        assert_eq!(resolve(Some(&sub), &root_abs).unwrap(), root_abs);
        let missing = Err("No such file or directory".to_string());
        assert_eq!(resolve(Some(&root_abs), "nosuch"), missing);
        assert_eq!(resolve(Some(&root_abs), ""), missing);
        assert_eq!(
            resolve(Some(&root_abs), "file"),
            Err("Not a directory".to_string())
        );
        std::fs::remove_dir_all(&root).unwrap();
    }
}
