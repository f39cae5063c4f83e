//! SplitMix64: the small, portable, seeded generator behind the bundled random projection, the
//! benchmark data and the tests' corpora. Integer operations only, so every platform (wasm
//! included) draws the same numbers.

/// SplitMix64 (Steele, Lea & Flood 2014).
#[derive(Debug, Clone)]
pub struct SplitMix64(pub u64);

impl SplitMix64 {
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    /// Uniform in [0, 1), 53 random bits.
    pub fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }
    /// Uniform in 0..m (m > 0; modulo bias is negligible for small m).
    pub fn below(&mut self, m: u64) -> u64 {
        self.next_u64() % m
    }
    /// Uniform in (0, 1): never 0, so `ln` is finite.
    pub fn open01(&mut self) -> f64 {
        ((self.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64
    }
    /// A standard normal (Box-Muller, one of the pair).
    pub fn normal(&mut self) -> f64 {
        let (u, v) = (self.open01(), self.open01());
        (-2.0 * u.ln()).sqrt() * (std::f64::consts::TAU * v).cos()
    }
}
