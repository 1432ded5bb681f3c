//! The stretches of a TSN range that a set of ranges does not cover: what a SACK's gap
//! blocks newly acknowledge against what earlier blocks did, and what a SACK no longer
//! reports (reneging).

/// The stretches of `lo ..= hi` outside `covered` (ranges sorted by start), in order.
pub(in crate::assoc) fn uncovered(
    lo: u64,
    hi: u64,
    covered: &[(u64, u64)],
) -> impl Iterator<Item = (u64, u64)> + '_ {
    let mut rest = covered.iter().peekable();
    let mut from = lo;
    std::iter::from_fn(move || {
        while from <= hi {
            match rest.peek() {
                Some(&&(s, e)) if s <= from => {
                    from = from.max(e + 1);
                    rest.next();
                }
                Some(&&(s, _)) if s <= hi => {
                    let part = (from, s - 1);
                    from = s;
                    return Some(part);
                }
                _ => {
                    let part = (from, hi);
                    from = hi + 1;
                    return Some(part);
                }
            }
        }
        None
    })
}

#[cfg(test)]
mod tests {
    use super::uncovered;

    #[test]
    fn uncovered_stretches_of_a_block() {
        let cov = [(10, 12), (15, 15), (20, 30)];
        let parts = |lo, hi| uncovered(lo, hi, &cov).collect::<Vec<_>>();
        assert_eq!(parts(10, 12), []);
        assert_eq!(parts(8, 16), [(8, 9), (13, 14), (16, 16)]);
        assert_eq!(parts(13, 40), [(13, 14), (16, 19), (31, 40)]);
        assert_eq!(parts(1, 5), [(1, 5)]);
        assert_eq!(parts(25, 35), [(31, 35)]);
        // Overlapping cover (a bogus SACK's blocks) only hides what it covers.
        let odd = [(5, 20), (8, 9)];
        assert_eq!(
            uncovered(1, 25, &odd).collect::<Vec<_>>(),
            [(1, 4), (21, 25)]
        );
    }
}
