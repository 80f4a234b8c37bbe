//! A versioned hash write: a stale batch cannot overwrite an admin's newer edit.
//! `cargo run --example versioned`

use redlab_client::{InProcess, VersionedHash};

#[tokio::main]
async fn main() -> Result<(), redlab_client::Error> {
    let engine = InProcess::new(redlab::Config::default());
    let conn = engine.connect().await;
    let products = VersionedHash::new(conn.clone());
    println!(
        "batch v1: {:?}",
        products
            .write("product:42", &[("price", "150000"), ("stock", "50")], 1)
            .await?
    );
    println!(
        "admin v2 (out of stock): {:?}",
        products.write("product:42", &[("stock", "0")], 2).await?
    );
    println!(
        "late batch v1 again: {:?}",
        products.write("product:42", &[("stock", "50")], 1).await?
    );
    println!(
        "stock is {:?}",
        conn.cmd(&["HGET", "product:42", "stock"]).await?.as_str()
    );
    Ok(())
}
