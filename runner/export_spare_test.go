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

// LastSpawnedSparePID returns the pid of the latest spare supervisor r
// started, whether or not a job or Close took it since (0 when none).
func LastSpawnedSparePID(r *Runner) int {
	r.spareMu.Lock()
	defer r.spareMu.Unlock()
	if r.lastSpare == nil {
		return 0
	}
	return r.lastSpare.pid
}
