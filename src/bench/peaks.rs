//! Known f32 peaks (non-tensor FMA rate, boost clock) by adapter-name substring, for the share
//! of peak in `faithful bench`. Unknown devices (and the CPU) get `None`, never a guess.

/// (substring, peak f32 TFLOP/s). More specific names first: the first match wins.
pub const KNOWN_PEAKS: &[(&str, f64)] = &[
    ("H200", 66.9),
    ("H100 PCIe", 51.2),
    ("H100 NVL", 60.0),
    ("H100", 66.9),
    ("A100", 19.5),
    ("L40S", 91.6),
    ("L40", 90.5),
    ("L4", 30.3),
    ("A10G", 31.2),
    ("A10", 31.2),
    ("RTX 4090", 82.6),
    ("RTX 4080", 48.7),
    ("RTX 3090", 35.6),
    ("RTX 3080", 29.8),
    ("V100", 15.7),
    ("T4", 8.1),
    ("MI300X", 163.4),
    ("MI250X", 47.9),
];

/// The peak f32 TFLOP/s of an adapter, by name (case-sensitive substrings as vendors spell them).
pub fn peak_tflops(adapter_name: &str) -> Option<f64> {
    KNOWN_PEAKS.iter().find(|(s, _)| adapter_name.contains(s)).map(|&(_, p)| p)
}

#[cfg(test)]
mod tests {
    #[test]
    fn lookup() {
        assert_eq!(super::peak_tflops("NVIDIA H100 PCIe"), Some(51.2));
        assert_eq!(super::peak_tflops("NVIDIA H200"), Some(66.9));
        assert_eq!(super::peak_tflops("NVIDIA GeForce RTX 4090"), Some(82.6));
        assert_eq!(super::peak_tflops("llvmpipe (LLVM 15.0.6, 256 bits)"), None);
    }
}
