//go:build linux

package runner

import (
	"bytes"
	"io"
)

// maxReturning bounds the supervisors a runner asks back at a time
// (spec.Return): each holds a socket of the host's open while its job
// runs. Past it, a job's supervisor exits once its job has settled, as
// without spares.
const maxReturning = 8

// reserveReturn says whether the supervisor of the job being started is to
// be asked back, and holds one of maxReturning places for it if so. Every
// true must be matched by one releaseReturn.
func (r *Runner) reserveReturn() bool {
	if !r.keepSpare {
		return false
	}
	r.spareMu.Lock()
	defer r.spareMu.Unlock()
	if r.closed || r.returnSlots >= maxReturning {
		return false
	}
	r.returnSlots++
	return true
}

// releaseReturn ends a reservation (back) of reserveReturn: with p nil the
// job did not go on record under a supervisor asked back, and the place is
// free again; with p, the job is on record under p, acknowledged, and p is
// awaited (awaitReturn), its place held until it comes back or ends.
func (r *Runner) releaseReturn(back bool, p *supProc) {
	if !back {
		return
	}
	r.spareMu.Lock()
	defer r.spareMu.Unlock()
	if p == nil || r.closed {
		r.returnSlots--
		if p != nil {
			p.conn.Close()
		}
		return
	}
	if r.returning == nil {
		r.returning = map[*supProc]struct{}{}
	}
	r.returning[p] = struct{}{}
	r.returns.Add(1)
	go r.awaitReturn(p)
}

// awaitReturn waits for supervisor p, asked back, to say it is free again
// (spareAgain) and makes it the first spare, the one the next start takes:
// it has finished starting long ago. When it ends instead, or
// maxIdleSpares already wait, or the runner was closed, its socket is
// closed and it exits.
func (r *Runner) awaitReturn(p *supProc) {
	defer r.returns.Done()
	back := readSpareAgain(p)
	r.spareMu.Lock()
	delete(r.returning, p)
	r.returnSlots--
	if back && !r.closed && len(r.spares) < maxIdleSpares {
		p.status = nil // closed with its report: the next one comes with the spec
		r.spares = append([]*supProc{p}, r.spares...)
		r.armTrim()
		r.spareMu.Unlock()
		return
	}
	closed := r.closed
	r.spareMu.Unlock()
	p.conn.Close()
	if back && closed {
		awaitExit(p) // Close leaves no supervisor of its runner idle behind
	}
}

// readSpareAgain reads p's hand-over socket until its supervisor says
// spareAgain (true), or anything else, or the socket ends (false).
func readSpareAgain(p *supProc) bool {
	want := []byte(spareAgain + "\n")
	got := make([]byte, len(want))
	_, err := io.ReadFull(p.conn, got)
	return err == nil && bytes.Equal(got, want)
}
