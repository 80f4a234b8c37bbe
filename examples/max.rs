//! Keep-the-maximum for read positions, with the dirty set a write-back job drains.
//! `cargo run --example max`

use redlab_client::{InProcess, MonotonicMax};

#[tokio::main]
async fn main() -> Result<(), redlab_client::Error> {
    let engine = InProcess::new(redlab::Config::default());
    let conn = engine.connect().await;
    let max = MonotonicMax::new(conn, "lastRead:dirty");
    println!(
        "message 150 read: stored = {}",
        max.update("lastRead:user:1:chat:7", 150).await?
    );
    println!(
        "late message 120: stored = {}",
        max.update("lastRead:user:1:chat:7", 120).await?
    );
    println!(
        "position now: {:?}",
        max.get("lastRead:user:1:chat:7").await?
    );
    println!("write-back drains: {:?}", max.drain(100).await?);
    Ok(())
}
