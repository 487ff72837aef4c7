package runner

import "time"

// SetPendingHold makes r let go of a detached start's create begun ahead
// after d, in place of pendingHold.
func SetPendingHold(r *Runner, d time.Duration) { r.pendingHold = d }
