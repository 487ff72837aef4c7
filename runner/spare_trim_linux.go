//go:build linux

package runner

import "time"

// spareTrimAfter is how long the supervisors waiting beyond spareCount
// stay after the last start that took a spare: those a burst of calls
// needed are let go once the calls have stopped, and an idle host keeps
// its two.
const spareTrimAfter = time.Minute

// armTrim makes sure trimSpares runs once the supervisors waiting beyond
// spareCount have been idle for spareTrimAfter. r.spareMu is held.
func (r *Runner) armTrim() {
	if len(r.spares) > spareCount && r.trim == nil && !r.closed {
		r.trim = time.AfterFunc(spareTrimAfter, r.trimSpares)
	}
}

// trimSpares lets go of the supervisors waiting beyond spareCount (the
// last in line: those a start takes last) when no start has taken a spare
// for spareTrimAfter, and otherwise looks again when that much time has
// passed since the last one did. Close waits for those it lets go to exit.
func (r *Runner) trimSpares() {
	r.spareMu.Lock()
	r.trim = nil
	if r.closed || len(r.spares) <= spareCount {
		r.spareMu.Unlock()
		return
	}
	if wait := spareTrimAfter - time.Since(r.lastTake); wait > 0 {
		r.trim = time.AfterFunc(wait, r.trimSpares)
		r.spareMu.Unlock()
		return
	}
	extra := r.spares[spareCount:]
	r.spares = append([]*supProc(nil), r.spares[:spareCount]...)
	r.spareSpawns.Add(1)
	r.spareMu.Unlock()
	defer r.spareSpawns.Done()
	for _, p := range extra {
		p.close()
	}
	for _, p := range extra {
		awaitExit(p)
	}
}
