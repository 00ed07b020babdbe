//! The sampler's clock, in the meter's seconds. Under icount with QEMU's
//! `shift` an instruction takes 2^shift ns of guest time, so 10^9
//! instructions (the meter's second, what M/Ginsn is per) are 2^shift
//! guest seconds. Reading the guest's clock in those units keeps a
//! window's instructions and a rate's unit whatever the shift: what the
//! shift changes is only how often the guest's timers fire per
//! instruction, and QEMU's turns with them.

use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Clock {
    /// Guest seconds in a meter second.
    scale: f64,
}

impl Clock {
    /// Guest time is the meter's: the time meter, and icount at shift 0.
    pub const GUEST: Clock = Clock { scale: 1.0 };

    pub fn of_icount_shift(shift: u32) -> Clock {
        Clock {
            scale: 2f64.powi(shift.min(64) as i32),
        }
    }

    /// How long the guest's clock runs in `meter_s` of the meter's seconds.
    pub fn guest(self, meter_s: f64) -> Duration {
        Duration::from_secs_f64(meter_s * self.scale)
    }

    /// The meter's seconds in `guest` time of the guest's clock.
    pub fn meter(self, guest: Duration) -> f64 {
        guest.as_secs_f64() / self.scale
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_shift_stretches_guest_time_by_its_power_of_two() {
        let c = Clock::of_icount_shift(2);
        assert_eq!(c.guest(0.1), Duration::from_secs_f64(0.4));
        assert_eq!(c.meter(Duration::from_millis(400)), 0.4 / 4.0);
        assert_eq!(Clock::of_icount_shift(0), Clock::GUEST);
        assert_eq!(Clock::GUEST.meter(Duration::from_millis(250)), 0.25);
    }
}
