//! The three rate limiters against redlab, timed by the server's clock.
//! `cargo run --example limiters`

use std::time::Duration;

use redlab::{Clock, Server};
use redlab_client::{Connection, FixedWindow, SlidingLog, TokenBucket};

#[tokio::main]
async fn main() -> Result<(), redlab_client::Error> {
    let clock = Clock::manual(1_700_000_000_000);
    let server = Server::builder().clock(clock.clone()).start();
    let conn = Connection::tcp(server.addr()).await?;

    let fixed = FixedWindow::new(conn.clone(), 3, 60);
    for i in 1..=4 {
        println!("fixed window hit {i}: {:?}", fixed.hit("api:user:1").await?);
    }
    println!(
        "fixed window with limit \"1.5\": {:?}",
        FixedWindow::new(conn.clone(), "1.5", 60).hit("k").await
    );

    let sliding = SlidingLog::new(conn.clone(), 2, Duration::from_secs(1));
    for i in 1..=3 {
        println!(
            "sliding log hit {i}: {:?}",
            sliding.hit("upload:user:1").await?
        );
    }
    clock.advance(Duration::from_secs(1));
    println!(
        "one second later: {:?}",
        sliding.hit("upload:user:1").await?
    );

    let bucket = TokenBucket::new(conn.clone(), 5, 1);
    println!(
        "take 5 of 5 tokens: {:?}",
        bucket.take("bucket:user:1", 5).await?
    );
    println!("take 1 more: {:?}", bucket.take("bucket:user:1", 1).await?);
    clock.advance(Duration::from_secs(2));
    println!(
        "two seconds later, take 2: {:?}",
        bucket.take("bucket:user:1", 2).await?
    );
    Ok(())
}
