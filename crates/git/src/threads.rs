//! Work spread over a few threads.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

use anyhow::Result;

/// One thread per core (at most 8).
pub(crate) fn cores() -> usize {
    std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(1)
        .clamp(1, 8)
}

/// Two threads per core (at most 16), for work that is mostly system calls
/// (a worktree's status: an `lstat` of every tracked file, a `readdir` of
/// every directory), which block whenever an inode is not in memory; git's
/// own status uses more threads than cores for its `lstat`s too
/// (`core.preloadIndex`), and so does worktrunk's `wt list`.
pub(crate) fn io_threads() -> usize {
    2 * cores()
}

/// `f` over `items` on a few threads, results in order. A thread that panics
/// gives errors for its items, never a panic here.
pub(crate) fn on_threads<I: Sync, T: Send>(
    items: &[I],
    f: impl Fn(&I) -> Result<T> + Sync,
) -> Vec<Result<T>> {
    let mut out = Vec::with_capacity(items.len());
    in_order(cores(), items, f, |_, r| {
        out.push(r);
        true
    });
    out
}

/// `f` over `items` on at most `threads` threads, each taking the next item as
/// it is free (so the first items are done first), and `each` called on this thread with
/// every result in the order of `items`, as soon as it and all before it are
/// done: a caller can show the first results while the rest are computed.
/// When `each` returns false, no more items are started or handed to it.
/// An item whose `f` panics gives an error, never a panic here.
pub(crate) fn in_order<I: Sync, T: Send>(
    threads: usize,
    items: &[I],
    f: impl Fn(&I) -> Result<T> + Sync,
    mut each: impl FnMut(usize, Result<T>) -> bool,
) {
    let threads = threads.max(1).min(items.len().max(1));
    let guarded = |item: &I| -> Result<T> {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(item)))
            .unwrap_or_else(|_| Err(anyhow::anyhow!("could not be computed (a thread failed)")))
    };
    if threads <= 1 {
        for (i, item) in items.iter().enumerate() {
            if !each(i, guarded(item)) {
                return;
            }
        }
        return;
    }
    let next = AtomicUsize::new(0);
    let (tx, rx) = std::sync::mpsc::channel::<(usize, Result<T>)>();
    std::thread::scope(|scope| {
        for _ in 0..threads {
            let (tx, next, guarded) = (tx.clone(), &next, &guarded);
            scope.spawn(move || loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(item) = items.get(i) else { break };
                if tx.send((i, guarded(item))).is_err() {
                    break;
                }
            });
        }
        drop(tx);
        let mut done: BTreeMap<usize, Result<T>> = BTreeMap::new();
        let mut at = 0;
        for (i, r) in rx {
            done.insert(i, r);
            while let Some(r) = done.remove(&at) {
                at += 1;
                if !each(at - 1, r) {
                    // The threads finish what they started, and take no more.
                    next.store(items.len(), Ordering::Relaxed);
                    return;
                }
            }
        }
        for i in at..items.len() {
            let r = done
                .remove(&i)
                .unwrap_or_else(|| Err(anyhow::anyhow!("could not be computed (a thread failed)")));
            if !each(i, r) {
                return;
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn results_come_in_order_and_a_panic_is_an_error() {
        let items: Vec<usize> = (0..50).collect();
        let mut seen = Vec::new();
        in_order(
            4,
            &items,
            |&i| {
                if i == 7 {
                    panic!("boom");
                }
                Ok(i * 2)
            },
            |i, r| {
                seen.push((i, r.ok()));
                true
            },
        );
        let want: Vec<(usize, Option<usize>)> =
            (0..50).map(|i| (i, (i != 7).then_some(i * 2))).collect();
        assert_eq!(seen, want);
        assert_eq!(on_threads(&items[..3], |&i| Ok(i)).len(), 3);
        let mut handed = 0;
        in_order(
            4,
            &items,
            |&i| Ok(i),
            |_, _| {
                handed += 1;
                handed < 5
            },
        );
        assert_eq!(handed, 5, "nothing is handed out after a stop");
    }
}
