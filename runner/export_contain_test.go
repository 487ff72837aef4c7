package runner

// UseProcessGroupContainment makes r's in-process jobs fall back to
// process-group containment, as in a program that never called
// MaybeSupervise.
func UseProcessGroupContainment(r *Runner) { processGroupOnly.Store(r, struct{}{}) }
