//! Which vector versions of the CPU kernels serve: one check, shared by the row terms, the
//! tiles' sums, the exponential and the logarithm, with the tests' switch to the portable
//! versions (every version gives the same bits, so the switch changes no result).

/// Whether the AVX-512 versions serve (checked once by the standard library, then a load).
#[cfg(target_arch = "x86_64")]
#[inline]
pub(crate) fn avx512() -> bool {
    #[cfg(test)]
    if PORTABLE.load(std::sync::atomic::Ordering::Relaxed) {
        return false;
    }
    std::arch::is_x86_feature_detected!("avx512f")
}

/// Tests set this to run the portable versions on a CPU with AVX-512 (the same bits, so other
/// tests running meanwhile are unaffected).
#[cfg(test)]
pub(crate) static PORTABLE: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
