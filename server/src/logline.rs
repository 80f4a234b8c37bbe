//! The binary's log, in redis-server's line format, where tools look for it.
//!
//! A Redis log line is `pid:role dd Mon yyyy hh:mm:ss.mmm level message`, the role being
//! `C` while the configuration is read and `M` once the server runs, the level one of
//! `.` (debug), `-` (verbose), `*` (notice) and `#` (warning). Test harnesses and container
//! tools read the log to learn that the server is up ("Ready to accept connections"), so the
//! lines go where Redis writes them: stdout, or the `logfile` when one is configured.
//! Times are UTC (Redis uses local time; redlab takes no time-zone database for it).

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use tracing::{Event, Level, Subscriber};
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

/// The role letter of the lines logged from now on.
static ROLE: AtomicU8 = AtomicU8::new(b'C');

/// Lines from now on are the running server's (`M`), no longer the config reader's (`C`).
pub fn set_running() {
    ROLE.store(b'M', Ordering::Relaxed);
}

/// The `tracing` filter for Redis's `loglevel`: redlab's own events at that level, other
/// crates' at warning and above.
pub fn filter_for(loglevel: &str) -> String {
    let level = match loglevel {
        "debug" => "trace",
        "verbose" => "debug",
        "warning" => "warn",
        _ => "info",
    };
    format!("warn,redlab_server={}", level)
}

/// Formats events as redis-server log lines.
pub struct RedisLine;

impl<S, N> FormatEvent<S, N> for RedisLine
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
{
    fn format_event(
        &self,
        ctx: &FmtContext<'_, S, N>,
        mut writer: Writer<'_>,
        event: &Event<'_>,
    ) -> std::fmt::Result {
        let mark = match *event.metadata().level() {
            Level::ERROR | Level::WARN => '#',
            Level::INFO => '*',
            Level::DEBUG => '-',
            Level::TRACE => '.',
        };
        let role = ROLE.load(Ordering::Relaxed) as char;
        let mut head = String::new();
        let _ = write!(head, "{}:{} ", std::process::id(), role);
        timestamp(&mut head, SystemTime::now());
        write!(writer, "{} {} ", head, mark)?;
        ctx.field_format().format_fields(writer.by_ref(), event)?;
        writeln!(writer)
    }
}

/// `dd Mon yyyy hh:mm:ss.mmm` in UTC.
fn timestamp(out: &mut String, t: SystemTime) {
    const MONTHS: [&str; 12] = [
        "Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec",
    ];
    let since = t.duration_since(UNIX_EPOCH).unwrap_or_default();
    let secs = since.as_secs();
    let (y, m, d) = civil_from_days((secs / 86_400) as i64);
    let s = secs % 86_400;
    let _ = write!(
        out,
        "{:02} {} {} {:02}:{:02}:{:02}.{:03}",
        d,
        MONTHS[(m - 1) as usize],
        y,
        s / 3600,
        s / 60 % 60,
        s % 60,
        since.subsec_millis()
    );
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard Hinnant's
/// well-known days-to-civil algorithm).
fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn dates_read_like_redis() {
        let mut s = String::new();
        timestamp(
            &mut s,
            UNIX_EPOCH + Duration::from_millis(1_796_162_669_278),
        );
        assert_eq!(s, "01 Dec 2026 22:04:29.278");
        s.clear();
        timestamp(&mut s, UNIX_EPOCH + Duration::from_secs(951_782_400));
        assert_eq!(s, "29 Feb 2000 00:00:00.000");
        assert_eq!(filter_for("verbose"), "warn,redlab_server=debug");
    }
}
