//! The lock pattern against redlab: acquire with a fencing token, an owner-only release, a
//! renewal, a handover, and what happens to a holder that pauses past its lease.
//! `cargo run --example lock`

use std::time::Duration;

use redlab::{Clock, Server};
use redlab_client::{Acquire, Connection, Lock};

#[tokio::main]
async fn main() -> Result<(), redlab_client::Error> {
    let clock = Clock::manual(1_700_000_000_000);
    let server = Server::builder().clock(clock.clone()).start();
    let conn = Connection::tcp(server.addr()).await?;
    let lock = Lock::new(conn.clone(), "lock:order:100", Duration::from_secs(5));

    let Acquire::Acquired(a) = lock.try_acquire().await? else {
        unreachable!("the lock is free")
    };
    println!("A acquired the lock, fencing token {}", a.fence);
    println!("B tries: {:?}", lock.try_acquire().await?);
    println!("A renews: {}", lock.renew(&a).await?);

    // A stalls (a GC pause) longer than its lease; the server's clock moves on.
    clock.advance(Duration::from_secs(6));
    let Acquire::Acquired(b) = lock.try_acquire().await? else {
        unreachable!("the lease ran out")
    };
    println!(
        "after A's 6 s pause, B acquired it, fencing token {}",
        b.fence
    );
    println!(
        "A's late release deletes nothing: {}",
        lock.release(&a).await?
    );
    println!(
        "a resource that saw token {} rejects A's write with token {}",
        b.fence, a.fence
    );

    let c = lock.handover(&b).await?.expect("B owns the lock");
    println!("B handed the lock over to C, fencing token {}", c.fence);
    println!("C releases: {}", lock.release(&c).await?);
    Ok(())
}
