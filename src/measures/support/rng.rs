//! The random streams ZADU's randomised measures draw from, reproduced bit for bit so that a
//! seeded faithful run equals a seeded ZADU run:
//!
//! - [`Mt19937`]: NumPy's legacy `RandomState(seed)` (Mersenne Twister, `init_genrand`
//!   seeding): `random_sample`, `shuffle` and `choice(p=...)` as scikit-learn's k-means++ and
//!   ZADU's `ch_btw` use them.
//! - [`Pcg64`]: NumPy's `default_rng(seed)` (`SeedSequence` → PCG64 XSL-RR 128/64) with
//!   numba's `Generator.integers` (Lemire's bounded draw on buffered 32-bit outputs), as ZADU's
//!   CADI kernel uses it.

/// NumPy's legacy Mersenne Twister (`np.random.RandomState(seed)`).
pub(in crate::measures) struct Mt19937 {
    key: [u32; 624],
    pos: usize,
}

impl Mt19937 {
    /// `RandomState(seed)` for an integer seed in `0..2^32`.
    pub(in crate::measures) fn new(seed: u32) -> Self {
        let mut key = [0u32; 624];
        let mut s = seed;
        for (pos, k) in key.iter_mut().enumerate() {
            *k = s;
            s = 1_812_433_253u32.wrapping_mul(s ^ (s >> 30)).wrapping_add(pos as u32 + 1);
        }
        Mt19937 { key, pos: 624 }
    }

    fn twist(&mut self) {
        const UPPER: u32 = 0x8000_0000;
        const LOWER: u32 = 0x7fff_ffff;
        const MATRIX_A: u32 = 0x9908_b0df;
        let k = &mut self.key;
        for i in 0..624 {
            let y = (k[i] & UPPER) | (k[(i + 1) % 624] & LOWER);
            k[i] = k[(i + 397) % 624] ^ (y >> 1) ^ if y & 1 == 1 { MATRIX_A } else { 0 };
        }
        self.pos = 0;
    }

    /// The next 32-bit output (`mt19937_next32`).
    pub(in crate::measures) fn next_u32(&mut self) -> u32 {
        if self.pos == 624 {
            self.twist();
        }
        let mut y = self.key[self.pos];
        self.pos += 1;
        y ^= y >> 11;
        y ^= (y << 7) & 0x9d2c_5680;
        y ^= (y << 15) & 0xefc6_0000;
        y ^ (y >> 18)
    }

    /// `random_sample()`: a double in [0, 1) from two 32-bit outputs (53 bits).
    pub(in crate::measures) fn random_sample(&mut self) -> f64 {
        let a = (self.next_u32() >> 5) as f64;
        let b = (self.next_u32() >> 6) as f64;
        (a * 67_108_864.0 + b) / 9_007_199_254_740_992.0
    }

    /// `random_interval(max)`: uniform in `0..=max` by masked rejection (legacy `shuffle`).
    fn interval(&mut self, max: u32) -> u32 {
        if max == 0 {
            return 0;
        }
        let mut mask = max;
        mask |= mask >> 1;
        mask |= mask >> 2;
        mask |= mask >> 4;
        mask |= mask >> 8;
        mask |= mask >> 16;
        loop {
            let v = self.next_u32() & mask;
            if v <= max {
                return v;
            }
        }
    }

    /// `RandomState.shuffle` of a 1-D array (Fisher-Yates from the end).
    pub(in crate::measures) fn shuffle<T>(&mut self, x: &mut [T]) {
        for i in (1..x.len()).rev() {
            let j = self.interval(i as u32) as usize;
            x.swap(i, j);
        }
    }
}

/// NumPy's `PCG64` seeded through `SeedSequence`, with its buffered 32-bit outputs.
pub(in crate::measures) struct Pcg64 {
    state: u128,
    inc: u128,
    spare: Option<u32>,
}

const PCG_MULT: u128 = 0x2360_ED05_1FC6_5DA4_4385_DF64_9FCC_F645;

impl Pcg64 {
    /// `np.random.default_rng(seed)` for a non-negative integer seed.
    pub(in crate::measures) fn new(seed: u64) -> Self {
        let words = seed_sequence_u64(seed, 4);
        let initstate = (u128::from(words[0]) << 64) | u128::from(words[1]);
        let initseq = (u128::from(words[2]) << 64) | u128::from(words[3]);
        let mut g = Pcg64 { state: 0, inc: (initseq << 1) | 1, spare: None };
        g.step();
        g.state = g.state.wrapping_add(initstate);
        g.step();
        g
    }

    fn step(&mut self) {
        self.state = self.state.wrapping_mul(PCG_MULT).wrapping_add(self.inc);
    }

    /// The next 64-bit output (XSL-RR).
    pub(in crate::measures) fn next_u64(&mut self) -> u64 {
        self.step();
        let s = self.state;
        let x = ((s >> 64) as u64) ^ (s as u64);
        x.rotate_right((s >> 122) as u32)
    }

    /// The next 32-bit output: the low half of a 64-bit draw, then its high half.
    pub(in crate::measures) fn next_u32(&mut self) -> u32 {
        if let Some(v) = self.spare.take() {
            return v;
        }
        let v = self.next_u64();
        self.spare = Some((v >> 32) as u32);
        v as u32
    }

    /// numba's `rng.integers(0, high)` for `1 <= high <= 2^32`: no draw when `high == 1`,
    /// Lemire's multiply-and-reject on 32-bit outputs otherwise.
    pub(in crate::measures) fn integers(&mut self, high: u64) -> u64 {
        debug_assert!((1..=1u64 << 32).contains(&high));
        let rng = high - 1;
        if rng == 0 {
            return 0;
        }
        if rng == 0xFFFF_FFFF {
            return u64::from(self.next_u32());
        }
        let excl = rng + 1;
        let mut m = u64::from(self.next_u32()) * excl;
        let mut leftover = m & 0xFFFF_FFFF;
        if leftover < excl {
            let threshold = (0xFFFF_FFFFu64 - rng) % excl;
            while leftover < threshold {
                m = u64::from(self.next_u32()) * excl;
                leftover = m & 0xFFFF_FFFF;
            }
        }
        m >> 32
    }
}

/// `SeedSequence(seed).generate_state(n, np.uint64)` (pool of four 32-bit words, no spawn key).
fn seed_sequence_u64(seed: u64, n: usize) -> Vec<u64> {
    const INIT_A: u32 = 0x43b0_d7e5;
    const MULT_A: u32 = 0x931e_8875;
    const INIT_B: u32 = 0x8b51_f9dd;
    const MULT_B: u32 = 0x58f3_8ded;
    const MIX_MULT_L: u32 = 0xca01_f9dd;
    const MIX_MULT_R: u32 = 0x4973_f715;
    let entropy: Vec<u32> = if seed >> 32 == 0 { vec![seed as u32] } else { vec![seed as u32, (seed >> 32) as u32] };
    let mut hash_const = INIT_A;
    let mut hashmix = |value: u32| {
        let mut v = value ^ hash_const;
        hash_const = hash_const.wrapping_mul(MULT_A);
        v = v.wrapping_mul(hash_const);
        v ^ (v >> 16)
    };
    let mix = |x: u32, y: u32| {
        let r = MIX_MULT_L.wrapping_mul(x).wrapping_sub(MIX_MULT_R.wrapping_mul(y));
        r ^ (r >> 16)
    };
    let mut pool = [0u32; 4];
    for (i, p) in pool.iter_mut().enumerate() {
        *p = hashmix(entropy.get(i).copied().unwrap_or(0));
    }
    for src in 0..4 {
        for dst in 0..4 {
            if src != dst {
                let h = hashmix(pool[src]);
                pool[dst] = mix(pool[dst], h);
            }
        }
    }
    for &e in entropy.iter().skip(4) {
        for dst in 0..4 {
            let h = hashmix(e);
            pool[dst] = mix(pool[dst], h);
        }
    }
    let mut hash_const = INIT_B;
    let words: Vec<u32> = (0..2 * n)
        .map(|i| {
            let mut v = pool[i % 4] ^ hash_const;
            hash_const = hash_const.wrapping_mul(MULT_B);
            v = v.wrapping_mul(hash_const);
            v ^ (v >> 16)
        })
        .collect();
    words.chunks(2).map(|w| u64::from(w[0]) | (u64::from(w[1]) << 32)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mt19937_matches_numpy_random_state() {
        // np.random.RandomState(0): random_sample() x3, then randint-free raw words.
        let mut g = Mt19937::new(0);
        assert_eq!(g.random_sample(), 0.5488135039273248);
        assert_eq!(g.random_sample(), 0.7151893663724195);
        assert_eq!(g.random_sample(), 0.6027633760716439);
        // np.random.RandomState(12345).random_sample()
        assert_eq!(Mt19937::new(12345).random_sample(), 0.9296160928171479);
        // np.random.seed(3); a = np.arange(10); np.random.shuffle(a)
        let mut a: Vec<u32> = (0..10).collect();
        Mt19937::new(3).shuffle(&mut a);
        assert_eq!(a, [5, 4, 1, 2, 9, 6, 7, 0, 3, 8]);
    }

    #[test]
    fn pcg64_matches_numpy() {
        // np.random.SeedSequence(0).generate_state(4, np.uint64)
        assert_eq!(
            seed_sequence_u64(0, 4),
            [15793235383387715774, 12390638538380655177, 2361836109651742017, 3188717715514472916]
        );
        // np.random.PCG64(seed).random_raw(...)
        let mut g = Pcg64::new(0);
        assert_eq!(
            [g.next_u64(), g.next_u64(), g.next_u64()],
            [11749869230777074271, 4976686463289251617, 755828109848996024]
        );
        let mut g = Pcg64::new((1 << 40) + 5);
        assert_eq!([g.next_u64(), g.next_u64()], [87427594128977387, 6872972437549564694]);
    }
}
