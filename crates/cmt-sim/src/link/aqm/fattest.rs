//! Which flow queue holds the most bytes, kept up to date as they change: a tournament
//! tree over the queues (each inner node names the larger of its two children, ties to
//! the lower index), so FQ-CoDel's overflow finds its victim in O(1) and each change
//! costs O(log flows) — not a scan of every queue, which with a thousand flows made
//! every overflow cost as much as a thousand packets.

/// Bytes per queue and the tournament over them.
#[derive(Debug, Default)]
pub struct Fattest {
    /// Leaves, a power of two (at least the number of queues).
    width: usize,
    /// Bytes of queue i (0 past the last queue).
    bytes: Vec<u64>,
    /// `winner[k]`: the queue with the most bytes under node k (the root is 1, the
    /// leaves `width..2·width`).
    winner: Vec<usize>,
}

impl Fattest {
    /// Queue `i` now holds `bytes`.
    pub fn set(&mut self, i: usize, bytes: u64) {
        if i >= self.width {
            self.grow(i + 1);
        }
        self.bytes[i] = bytes;
        let mut k = (self.width + i) / 2;
        while k >= 1 {
            self.winner[k] = self.better(self.winner[2 * k], self.winner[2 * k + 1]);
            k /= 2;
        }
    }

    /// The queue holding the most bytes (the lowest index among equals); `None` when
    /// there is no queue.
    pub fn get(&self) -> Option<usize> {
        (self.width > 0).then(|| self.winner[1])
    }

    fn better(&self, a: usize, b: usize) -> usize {
        if self.bytes[b] > self.bytes[a] {
            b
        } else {
            a
        }
    }

    /// Room for `n` queues: the next power of two, the tree rebuilt.
    fn grow(&mut self, n: usize) {
        let width = n.next_power_of_two().max(2);
        self.bytes.resize(width, 0);
        self.width = width;
        self.winner = vec![0; 2 * width];
        for i in 0..width {
            self.winner[width + i] = i;
        }
        for k in (1..width).rev() {
            self.winner[k] = self.better(self.winner[2 * k], self.winner[2 * k + 1]);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::{Rng, SeedableRng};

    /// Against a scan, through random changes to up to 300 queues.
    #[test]
    fn the_winner_is_always_what_a_scan_finds() {
        let mut f = Fattest::default();
        assert_eq!(f.get(), None);
        let mut bytes = Vec::new();
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(9);
        for _ in 0..20_000 {
            let i = rng.gen_range(0..300usize.min(bytes.len() + 1));
            let b = rng.gen_range(0..20u64) * 1500;
            if i == bytes.len() {
                bytes.push(0);
            }
            bytes[i] = b;
            f.set(i, b);
            let scan = (0..bytes.len()).max_by_key(|&j| (bytes[j], std::cmp::Reverse(j)));
            assert_eq!(f.get(), scan);
        }
    }
}
