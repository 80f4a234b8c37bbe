//! Redis's protected actions: `enable-protected-configs` guards CONFIG SET of parameters
//! such as `dir` and `dbfilename`, `enable-debug-command` and `enable-module-command` guard
//! DEBUG and MODULE. Each is `no`, `yes` or `local` (only a client on this host: a Unix
//! socket or 127.0.0.1 / ::1, as Redis's islocalClient checks).

use super::Config;

/// Redis's allowProtectedAction: whether `setting` lets a client at `addr` (CLIENT LIST's
/// `addr`: `ip:port`, or `path:0` for a Unix socket) act.
pub fn allows(setting: &str, addr: &str) -> bool {
    match setting {
        "yes" => true,
        "local" => is_local(addr),
        _ => false,
    }
}

/// Redis compares the peer's text with "127.0.0.1" and "::1" only (not all of 127/8).
/// Anything that is not an IP address and port is a Unix socket, or redlab's in-process
/// connection: both local.
fn is_local(addr: &str) -> bool {
    match addr.parse::<std::net::SocketAddr>() {
        Ok(a) => {
            let ip = a.ip().to_canonical();
            ip == std::net::Ipv4Addr::LOCALHOST || ip == std::net::Ipv6Addr::LOCALHOST
        }
        Err(_) => true,
    }
}

/// The refusal Redis's processCommand gives DEBUG or MODULE when its option does not
/// allow this client; None when the command is not one of them or is allowed.
pub fn command_refusal(config: &Config, command: &str, addr: &str) -> Option<String> {
    let option = match command {
        // redlab's in-process servers keep DEBUG open: see DIFFERENCES.md.
        "debug" if config.debug_command_open => return None,
        "debug" => "enable-debug-command",
        "module" => "enable-module-command",
        _ => return None,
    };
    let setting = config.get_by_name(option).unwrap_or_default();
    if allows(&setting, addr) {
        return None;
    }
    Some(format!(
        "ERR {} command not allowed. If the {} option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.",
        command.to_ascii_uppercase(),
        option
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn local_means_loopback_or_unix_socket() {
        assert!(allows("yes", "10.0.0.1:5000"));
        assert!(!allows("no", "127.0.0.1:5000"));
        assert!(allows("local", "127.0.0.1:5000"));
        assert!(allows("local", "[::1]:5000"));
        assert!(allows("local", "/tmp/redis.sock:0"));
        assert!(!allows("local", "10.0.0.1:5000"));
        // Redis compares the text: 127.0.0.2 is not local.
        assert!(!allows("local", "127.0.0.2:5000"));
    }

    #[test]
    fn debug_refused_as_redis_refuses_it() {
        let mut c = Config {
            debug_command_open: false,
            ..Config::default()
        };
        assert_eq!(
            command_refusal(&c, "debug", "127.0.0.1:1").as_deref(),
            Some("ERR DEBUG command not allowed. If the enable-debug-command option is set to \"local\", you can run it from a local connection, otherwise you need to set this option in the configuration file, and then restart the server.")
        );
        assert_eq!(command_refusal(&c, "get", "10.0.0.1:1"), None);
        c.set_by_name("enable-debug-command", "local").unwrap();
        assert_eq!(command_refusal(&c, "debug", "127.0.0.1:1"), None);
        assert!(command_refusal(&c, "debug", "10.0.0.1:1").is_some());
        c.debug_command_open = true;
        c.set_by_name("enable-debug-command", "no").unwrap();
        assert_eq!(command_refusal(&c, "debug", "10.0.0.1:1"), None);
    }
}
