//! URL deduplication for a crawler: a filter sized for the crawl says "seen before" for
//! every URL it has taken, and wrongly for about 1% of new ones (those URLs are skipped:
//! the price of using ~10 bits per URL instead of storing the URLs).
//!
//! It crawls 200,000 distinct URLs, then offers 200,000 new ones and counts how many the
//! filter wrongly calls seen, against the target.
//!
//! `cargo run --release --example url_dedup -p linebloom`

use linebloom::BloomFilter;

fn url(site: u32, page: u32) -> String {
    format!("https://site-{site}.example/articles/{page}?ref=feed")
}

fn main() -> Result<(), linebloom::ParamsError> {
    let (crawl, target) = (200_000u64, 0.01);
    let mut seen = BloomFilter::for_fpr(crawl, target)?;
    let mut fetched = 0u64;
    for i in 0..crawl as u32 {
        // Every URL is offered twice: the second offer must always be recognised.
        for _ in 0..2 {
            if seen.insert(url(i % 997, i).as_str()) {
                fetched += 1;
            }
        }
    }
    // `insert` returns true for a URL not seen before; a false positive makes a new URL
    // look seen, so a few of the 200,000 are skipped even on their first offer.
    println!("crawl: {crawl} distinct URLs offered twice, {fetched} fetched");
    assert!(
        fetched <= crawl,
        "a repeat was fetched: a false negative, impossible"
    );

    let fresh = 200_000u32;
    let wrongly_seen = (0..fresh)
        .filter(|&i| seen.contains(url(5_000 + i % 997, crawl as u32 + i).as_str()))
        .count();
    let rate = wrongly_seen as f64 / fresh as f64;
    println!(
        "new URLs wrongly called seen: {wrongly_seen} of {fresh} = {:.3}% (target {}%, \
         predicted {:.3}%)",
        100.0 * rate,
        100.0 * target,
        100.0 * seen.params().expected_fpr(crawl)
    );
    println!(
        "memory: {} bytes = {:.2} bits per URL, k = {}",
        seen.params().bytes(),
        seen.params().bits_per_key(crawl),
        seen.params().k()
    );
    Ok(())
}
