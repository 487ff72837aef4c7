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
