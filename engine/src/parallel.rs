//! Large per-line work shared among the machine's cores.
//!
//! After the read (and the stale check's SHA-256, which runs beside the
//! read: [`crate::hash::read_to_end_hashed`]), planning an edit to a 100 MB
//! file spends most of its time on two passes that look at each line alone:
//! splitting the bytes into lines ([`crate::text::Lines`]) and giving each
//! line its id for the matcher ([`crate::matching`]). Both split into
//! independent stretches, so a large file is cut into a few parts, each on
//! its own thread (docs/performance.md). So does the in-memory API's
//! assembly of a large result ([`crate::content::Splicing::render`]), whose
//! cost is mostly the page faults of a new buffer. The result is the same
//! as on one thread, part for part; only the wall time changes, and the
//! work (the cost bounds in those modules) does not.
//!
//! [`join`] runs two unrelated tasks at once: an Update's hunks are made
//! ready while its file is read ([`crate::matching::Matcher`]), and a large
//! commit's bytes are freed while its clean-up runs ([`crate::commit`]).
//!
//! Small inputs stay on the calling thread: starting a thread costs tens of
//! microseconds, more than splitting a megabyte. A thread the system refuses
//! to start leaves its parts to the threads that did start, so a process at
//! its thread limit still gets its answer.

use std::num::NonZeroUsize;
use std::sync::{Mutex, OnceLock, PoisonError};
use std::thread;

/// No more threads than this, whatever the machine: the passes are bound by
/// memory bandwidth well before.
const MAX_THREADS: usize = 8;

/// How many threads the machine can run at once (at most [`MAX_THREADS`]),
/// asked once per process: the answer reads cgroup files on Linux.
pub(crate) fn cores() -> usize {
    static CORES: OnceLock<usize> = OnceLock::new();
    *CORES.get_or_init(|| {
        thread::available_parallelism()
            .map_or(1, NonZeroUsize::get)
            .min(MAX_THREADS)
    })
}

/// How many parts to cut `len` units of work into so that each holds at
/// least `min_part` of them: 1 (this thread alone) for small inputs, at most
/// [`cores`].
pub(crate) fn parts(len: usize, min_part: usize) -> usize {
    (len / min_part.max(1)).clamp(1, cores())
}

/// Run `work` on every item, on `threads` threads at most (this one
/// included). Each thread takes the next item not yet taken, so the items
/// may be of unequal size; with one thread or one item everything runs
/// here, in order.
pub(crate) fn for_each<P: Send>(items: Vec<P>, threads: usize, work: impl Fn(P) + Sync) {
    let helpers = threads.min(items.len()).saturating_sub(1);
    if helpers == 0 {
        items.into_iter().for_each(work);
        return;
    }
    let queue = Mutex::new(items.into_iter());
    let next = || queue.lock().unwrap_or_else(PoisonError::into_inner).next();
    let drain = || {
        while let Some(item) = next() {
            work(item);
        }
    };
    thread::scope(|scope| {
        for _ in 0..helpers {
            // A thread that cannot be started takes nothing from the queue:
            // the others, this one included, drain it.
            let _ = thread::Builder::new().spawn_scoped(scope, drain);
        }
        drain();
    });
}

/// Run `beside` on a second thread while `here` runs on this one, and
/// return both results. With one core, or when the system refuses the
/// thread, `beside` runs here after `here`. A panic in `beside` reaches
/// this thread, as if it had run here.
pub(crate) fn join<A: Send, B>(
    beside: impl FnOnce() -> A + Send,
    here: impl FnOnce() -> B,
) -> (A, B) {
    if cores() < 2 {
        let b = here();
        return (beside(), b);
    }
    // Shared, not moved into the thread: a thread that cannot start drops
    // what was moved into it, and `beside` must then still run here.
    let task = Mutex::new(Some(beside));
    let take = || task.lock().unwrap_or_else(PoisonError::into_inner).take();
    let (ran, b) = thread::scope(|scope| {
        let started = thread::Builder::new().spawn_scoped(scope, || take().map(|f| f()));
        let b = here();
        let ran = match started {
            Ok(handle) => handle
                .join()
                .unwrap_or_else(|panic| std::panic::resume_unwind(panic)),
            Err(_) => None,
        };
        (ran, b)
    });
    match ran.or_else(|| take().map(|f| f())) {
        Some(a) => (a, b),
        // The task is taken exactly once, by the thread or here.
        None => unreachable!("the task of `join` ran nowhere"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[test]
    fn every_item_is_worked_on_exactly_once_whatever_the_thread_count() {
        for threads in [0, 1, 2, 3, 16] {
            let seen: Vec<AtomicUsize> = (0..50).map(|_| AtomicUsize::new(0)).collect();
            for_each((0..50).collect(), threads, |i: usize| {
                seen[i].fetch_add(1, Ordering::Relaxed);
            });
            assert!(seen.iter().all(|n| n.load(Ordering::Relaxed) == 1));
        }
    }

    #[test]
    fn join_returns_both_results_and_runs_each_once() {
        let runs = AtomicUsize::new(0);
        let (a, b) = join(
            || {
                runs.fetch_add(1, Ordering::Relaxed);
                "beside"
            },
            || {
                runs.fetch_add(10, Ordering::Relaxed);
                7
            },
        );
        assert_eq!((a, b, runs.load(Ordering::Relaxed)), ("beside", 7, 11));
    }

    #[test]
    fn a_panic_beside_reaches_the_caller_after_here_ran() {
        let here_ran = AtomicUsize::new(0);
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            join(
                || -> u8 { panic!("beside failed") },
                || here_ran.fetch_add(1, Ordering::Relaxed),
            )
        }));
        let payload = caught.expect_err("the panic of `beside` surfaces");
        assert_eq!(payload.downcast_ref::<&str>(), Some(&"beside failed"));
        assert_eq!(here_ran.load(Ordering::Relaxed), 1);
    }

    #[test]
    fn small_inputs_are_one_part() {
        assert_eq!(parts(10, 1 << 20), 1);
        assert_eq!(parts(0, 0), 1);
        assert!(parts(usize::MAX, 1) <= MAX_THREADS);
    }
}
