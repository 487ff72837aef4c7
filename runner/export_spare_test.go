package runner

// SparePID returns the pid of r's spare supervisor waiting for a job, or 0
// when there is none (yet).
func SparePID(r *Runner) int {
	r.spareMu.Lock()
	defer r.spareMu.Unlock()
	if r.spare == nil {
		return 0
	}
	return r.spare.pid
}

// PrestartedPID returns the pid of a supervisor started by Prestart, or 0
// once a runner took it or it was closed.
func PrestartedPID(ps *Prestarted) int {
	if ps == nil || ps.p == nil {
		return 0
	}
	return ps.p.pid
}
