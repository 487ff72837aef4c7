package runner

// SparePID returns the pid of the spare supervisor of r that the next
// detached start takes, or 0 when there is none (yet).
func SparePID(r *Runner) int {
	r.spareMu.Lock()
	defer r.spareMu.Unlock()
	if len(r.spares) == 0 {
		return 0
	}
	return r.spares[0].pid
}

// SpareCount returns how many spare supervisors of r wait for a job.
func SpareCount(r *Runner) int {
	r.spareMu.Lock()
	defer r.spareMu.Unlock()
	return len(r.spares)
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
