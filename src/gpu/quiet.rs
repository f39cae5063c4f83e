//! [`Quiet`]: stderr silenced while wgpu probes the graphics stack.
//!
//! Creating an instance and enumerating adapters loads every installed driver, and some print
//! to the process's stderr themselves: Mesa's Vulkan drivers write "error: XDG_RUNTIME_DIR is
//! invalid or not set in the environment." when that variable is missing, even when the CPU
//! then serves the run. faithful's stderr carries faithful's own lines only (the reason a GPU
//! cannot serve is reported by faithful), so on unix the file descriptor 2 points at
//! /dev/null while a guard lives. Guards nest and may overlap across threads: the first one
//! saves the real stderr and the last one restores it. The price: while a guard lives, every
//! thread's stderr goes to /dev/null, so guards wrap only driver probing (instance creation,
//! adapter enumeration, device requests), never work. Elsewhere the guard does nothing.

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

#[cfg(all(test, unix, not(target_arch = "wasm32")))]
mod tests {
    use super::Quiet;

    /// (device, inode) of what fd `fd` points at.
    fn target(fd: libc::c_int) -> (u64, u64) {
        // SAFETY: fstat on a descriptor into a zeroed struct; the return value is checked.
        let mut st: libc::stat = unsafe { std::mem::zeroed() };
        assert_eq!(unsafe { libc::fstat(fd, &mut st) }, 0);
        (st.st_dev as u64, st.st_ino as u64)
    }

    #[test]
    fn nested_and_overlapping_guards_restore_stderr_once_the_last_drops() {
        let real = target(2);
        let null = {
            let f = std::fs::File::open("/dev/null").unwrap();
            target(std::os::fd::AsRawFd::as_raw_fd(&f))
        };
        let outer = Quiet::new();
        assert_eq!(target(2), null);
        let inner = Quiet::new();
        // A guard on another thread that outlives the outer one.
        let (tx, rx) = std::sync::mpsc::channel();
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let other = std::thread::spawn(move || {
            let q = Quiet::new();
            tx.send(()).unwrap();
            go_rx.recv().unwrap();
            drop(q);
        });
        rx.recv().unwrap();
        drop(inner);
        drop(outer);
        assert_eq!(target(2), null, "the other thread's guard still lives");
        go_tx.send(()).unwrap();
        other.join().unwrap();
        assert_eq!(target(2), real, "the last guard restores the real stderr");
    }
}
