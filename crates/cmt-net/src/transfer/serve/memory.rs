//! A serving receiver's memory budget (`recv --dir … --max-memory SIZE`): what its
//! associations may hold together, and how their receive windows share it.
//!
//! An association is charged what it may hold at most: its receive window (data waiting
//! for a gap to fill), the datagrams that may wait for its task (its window and 64 KiB
//! more), the file writer's buffer (as large as the window, within 64 KiB and 1 MiB) and
//! 64 KiB of state. A new association gets
//! the configured window (`--rbuf`) while the budget has room for it, and less as the
//! budget fills, keeping back what every other free slot needs at the least (a
//! [`MIN_WINDOW`] each) and taking at most half of the rest, so later ones find room
//! too; never less than [`MIN_WINDOW`]. One that cannot get even that is treated as one
//! too many (a slow association is shed for it, or it is refused: [`super::police`]):
//! with more slots than the budget gives a floor each, the budget is the limit.
//! The charges of running associations never add up to more than the budget, but for
//! the moment between admitting a newcomer and the end of the one shed for it.

/// The budget when none is given (`--max-memory`).
pub const DEFAULT_BUDGET: u64 = 512 << 20;

/// The smallest receive window a served association gets.
pub const MIN_WINDOW: u64 = 64 << 10;
/// The association's own state, datagrams in the socket layer and the like.
const STATE: u64 = 64 << 10;
/// Datagrams waiting for an association's task beyond its window.
const INBOX_SLACK: u64 = 64 << 10;

/// What an association with receive window `window` is charged.
pub const fn charge(window: u64) -> u64 {
    window + inbox(window) + crate::sink::buffer_for(window) + STATE
}

/// The bytes of datagrams that may wait for the task of an association with receive
/// window `window` (more are dropped: lost packets to the protocol).
pub const fn inbox(window: u64) -> u64 {
    window + INBOX_SLACK
}

/// The receive window a new association gets with `left` bytes of the budget unused,
/// `configured` asked for and `others` slots still free besides its own: more than the
/// floor only from what is left after keeping a floor's charge back for each of those
/// others; `None` when not even the floor fits (the budget, not the number of slots,
/// then limits how many run at once).
pub fn window(left: u64, configured: u64, others: u64) -> Option<u64> {
    let floor = MIN_WINDOW.min(configured);
    if left < charge(floor) {
        return None;
    }
    let spare = left.saturating_sub(others.saturating_mul(charge(MIN_WINDOW)));
    // The window counts up to three times in a charge (held data, waiting datagrams,
    // the writer's buffer).
    let share = (spare / 2).saturating_sub(charge(0)) / 3;
    Some(configured.min(share).max(floor))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn windows_shrink_as_the_budget_fills_and_every_slot_keeps_room() {
        for (budget, slots) in [(512u64 << 20, 64u64), (512 << 20, 256), (64 << 20, 16)] {
            let configured = 4u64 << 20;
            let mut left = budget;
            let mut windows = Vec::new();
            for k in 0..slots {
                let w = window(left, configured, slots - k - 1).expect("every slot fits");
                assert!(charge(w) <= left, "{w} with {left} left");
                left -= charge(w);
                windows.push(w);
            }
            // The configured window while there is room, then less, never under the floor.
            assert_eq!(windows[0], configured, "{budget} for {slots}");
            assert!(windows.windows(2).all(|p| p[1] <= p[0]));
            assert!(windows.iter().all(|&w| w >= MIN_WINDOW));
        }
        // A budget too small for every slot: associations get the floor while it fits,
        // then none.
        assert_eq!(window(charge(MIN_WINDOW), 4 << 20, 1000), Some(MIN_WINDOW));
        assert_eq!(window(charge(MIN_WINDOW) - 1, 4 << 20, 0), None);
        // A window smaller than the floor is taken as configured.
        assert_eq!(window(512 << 20, 16 << 10, 63), Some(16 << 10));
    }
}
