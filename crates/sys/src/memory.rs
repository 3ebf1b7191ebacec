//! How the process gives memory back.
//!
//! glibc's allocator raises its mmap threshold to the size of each large block
//! freed (up to 32 MiB), so after the first worktree index of a few MiB, every
//! later one is carved out of the heap, and what is freed there stays with the
//! process: a `gc` whose live heap never exceeded 5 MiB held 27 MiB of heap at
//! its peak on symfony/symfony (13,000 files a worktree), most of it freed
//! indexes. A fixed threshold keeps large blocks (an index, a status's buffers)
//! in mappings of their own, returned when freed.

/// Keep large allocations out of the heap for the rest of the process; call it
/// first, while this is the only thread. Elsewhere than glibc, nothing to do.
pub fn return_large_frees() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator parameters; called before any
    // other thread exists.
    unsafe {
        // glibc's own default threshold, now fixed: 128 KiB.
        libc::mallopt(libc::M_MMAP_THRESHOLD, 128 * 1024);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 128 * 1024);
    }
}

/// Keep freed blocks of up to a few MiB in the heap for reuse: for a short
/// command that writes a dozen loose objects (`spawn`), each with a fresh zlib
/// state of ~440 KiB that would otherwise be mapped, faulted in page by page and
/// unmapped again for every object. Call it while this is the only thread.
pub fn reuse_large_frees() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only changes allocator parameters; called before any
    // other thread exists.
    unsafe {
        libc::mallopt(libc::M_MMAP_THRESHOLD, 4 * 1024 * 1024);
        libc::mallopt(libc::M_TRIM_THRESHOLD, 8 * 1024 * 1024);
    }
}
