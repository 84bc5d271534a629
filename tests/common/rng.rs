//! A small deterministic random generator for the randomised tests.

/// A small deterministic generator (xorshift64*), seeded by the caller.
pub struct Rng(u64);

impl Rng {
    /// Seeded from `CLAIMDAG_TEST_SEED` when set, else from the clock; the seed is printed so
    /// a failing run can be repeated.
    pub fn from_env(what: &str) -> Rng {
        let seed = std::env::var("CLAIMDAG_TEST_SEED")
            .ok()
            .and_then(|s| s.parse().ok())
            .unwrap_or_else(|| {
                std::time::SystemTime::now()
                    .duration_since(std::time::UNIX_EPOCH)
                    .map(|d| d.as_nanos() as u64)
                    .unwrap_or(1)
            });
        eprintln!("{what}: seed {seed} (set CLAIMDAG_TEST_SEED={seed} to repeat)");
        Rng(seed | 1)
    }

    pub fn seeded(seed: u64) -> Rng {
        Rng(seed | 1)
    }

    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}
