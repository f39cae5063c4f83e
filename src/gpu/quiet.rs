//! [`Quiet`]: stderr silenced while wgpu probes the graphics stack.
//!
//! Creating an instance and enumerating adapters loads every installed driver, and some print
//! to the process's stderr themselves: Mesa's Vulkan drivers write "error: XDG_RUNTIME_DIR is
//! invalid or not set in the environment." when that variable is missing, even when the CPU
//! then serves the run. faithful's stderr carries faithful's own lines only (the reason a GPU
//! cannot serve is reported by faithful), so on unix the file descriptor 2 points at
//! /dev/null while a guard lives. Guards nest and may overlap across threads: the first one
//! saves the real stderr and the last one restores it. Elsewhere the guard does nothing.

#[cfg(all(unix, not(target_arch = "wasm32")))]
mod imp {
    use std::sync::Mutex;

    /// (live guards, the saved descriptor of the real stderr).
    static STATE: Mutex<(usize, libc::c_int)> = Mutex::new((0, -1));

    pub struct Quiet(());

    impl Quiet {
        pub fn new() -> Quiet {
            let mut s = STATE.lock().unwrap_or_else(|e| e.into_inner());
            if s.0 == 0 {
                // SAFETY: plain descriptor calls; every return value is checked, and fd 2 is
                // only replaced when both the copy and /dev/null are open.
                unsafe {
                    let saved = libc::dup(2);
                    let null = libc::open(c"/dev/null".as_ptr(), libc::O_WRONLY | libc::O_CLOEXEC);
                    if saved >= 0 && null >= 0 && libc::dup2(null, 2) >= 0 {
                        s.1 = saved;
                    } else if saved >= 0 {
                        libc::close(saved);
                    }
                    if null >= 0 {
                        libc::close(null);
                    }
                }
            }
            s.0 += 1;
            Quiet(())
        }
    }

    impl Drop for Quiet {
        fn drop(&mut self) {
            let mut s = STATE.lock().unwrap_or_else(|e| e.into_inner());
            s.0 -= 1;
            if s.0 == 0 && s.1 >= 0 {
                // SAFETY: restores the descriptor saved by the first guard, then closes the copy.
                unsafe {
                    libc::dup2(s.1, 2);
                    libc::close(s.1);
                }
                s.1 = -1;
            }
        }
    }
}

#[cfg(not(all(unix, not(target_arch = "wasm32"))))]
mod imp {
    pub struct Quiet(());

    impl Quiet {
        pub fn new() -> Quiet {
            Quiet(())
        }
    }
}

pub use imp::Quiet;
