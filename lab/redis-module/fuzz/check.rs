//! The fuzz target's checks, shared with the module's `tests/fuzz_corpus.rs`, which runs
//! them over the committed seeds and regressions: whatever the bytes, decoding returns
//! (never panics, never allocates past what the bytes justify), and whatever decodes
//! answers lookups, takes inserts and deletes, and saves back to bytes that decode to
//! the same value.

use linebloom_redis::bf::BfFilter;
use linebloom_redis::cf::CfFilter;
use linebloom_redis::dump::{self, FRAME_LEN, Kind, Received};
use linebloom_redis::stored::{Body, Stored};

/// `data` as a saved value of either type, as it is and resealed; and as the first
/// piece of a load, then cut into pieces fed in order.
pub fn dump(data: &[u8]) {
    value::<BfFilter>(data);
    value::<CfFilter>(data);
    if data.len() >= FRAME_LEN {
        for kind in [Kind::Bf, Kind::Cf] {
            let sealed = dump::seal(kind, &data[FRAME_LEN..]);
            match kind {
                Kind::Bf => value::<BfFilter>(&sealed),
                Kind::Cf => value::<CfFilter>(&sealed),
            }
            pieces(
                kind,
                &sealed,
                data.first().map_or(1, |&b| usize::from(b) + 1),
            );
        }
    }
}

/// A saved value: refused, or a value that works and round-trips.
fn value<F: Body + PartialEq + std::fmt::Debug>(bytes: &[u8]) {
    let Ok(stored) = Stored::<F>::from_saved(bytes) else {
        return;
    };
    let again =
        Stored::<F>::from_saved(&stored.to_saved()).expect("a value saves to bytes it loads");
    assert_eq!(again, stored);
    if let Stored::Live(mut f) = stored {
        exercise(&mut f);
    }
}

/// Feeds `sealed` as pieces of `len` bytes after a whole first piece: every piece after
/// the first is refused (their length is not the frame's), and nothing panics.
fn pieces(kind: Kind, sealed: &[u8], len: usize) {
    let first = sealed.len().min(dump::PIECE_LEN);
    match dump::start(kind, &sealed[..first]) {
        Ok(Received::Partial(mut p)) => {
            for (i, piece) in sealed[first..].chunks(len).enumerate() {
                if p.feed(i as i64 + 2, piece).is_err() {
                    break;
                }
            }
        }
        Ok(Received::Whole(_)) | Err(_) => {}
    }
}

/// Operations a decoded filter must take without panicking.
fn exercise<F: Body>(f: &mut F) {
    let any = f as &mut dyn std::any::Any;
    if let Some(bf) = any.downcast_mut::<BfFilter>() {
        for i in 0..50u32 {
            let item = i.to_le_bytes();
            if bf.add(&item).is_ok() {
                assert!(bf.exists(&item), "no false negative after an add");
            }
        }
        let _ = bf.debug_lines();
    } else if let Some(cf) = any.downcast_mut::<CfFilter>() {
        for i in 0..50u32 {
            let item = i.to_le_bytes();
            if cf.add(&item).is_ok() {
                assert!(cf.exists(&item) && cf.count(&item) >= 1);
                assert!(cf.delete(&item));
            }
        }
    }
}
