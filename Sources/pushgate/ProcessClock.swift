import Timing

/// The process's one clock, made here at the composition root and handed to every part
/// the commands build (the only `SystemClock()` outside Timing; scripts/check-time.py).
let processClock: any TimeSource = SystemClock()
