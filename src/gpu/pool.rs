//! A pool of output and readback buffers, reused across dispatches: sizes are rounded up to a
//! power of two so that the blocks of a pass (and the passes of later calls) share buffers.

use std::collections::HashMap;
use std::sync::Mutex;

/// Buffers kept per (usage, size); more are dropped.
const KEEP: usize = 4;

#[derive(Default)]
pub struct BufferPool {
    free: Mutex<HashMap<(u32, u64), Vec<wgpu::Buffer>>>,
}

impl BufferPool {
    /// A buffer of at least `size` bytes with `usage`; the bool says whether it was reused.
    pub fn take(
        &self,
        device: &wgpu::Device,
        usage: wgpu::BufferUsages,
        size: u64,
        label: &str,
    ) -> (wgpu::Buffer, bool) {
        let size = size.max(4).next_power_of_two();
        if let Some(b) = self.free.lock().expect("buffer pool").get_mut(&(usage.bits(), size)).and_then(Vec::pop) {
            return (b, true);
        }
        (
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage,
                mapped_at_creation: false,
            }),
            false,
        )
    }

    /// Returns a buffer (unmapped) for reuse.
    pub fn give(&self, b: wgpu::Buffer) {
        let mut free = self.free.lock().expect("buffer pool");
        let slot = free.entry((b.usage().bits(), b.size())).or_default();
        if slot.len() < KEEP {
            slot.push(b);
        }
    }
}
