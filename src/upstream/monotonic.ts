/**
 * Milliseconds on a monotonic clock, for what is timed in durations (a breaker's open time, a
 * cached answer's TTL): the wall clock can be stepped back (NTP, a VM resumed), which would stretch
 * them by as much.
 */
export const monotonicNow = (): number => performance.now();
