package runner

import (
	"sync"
	"time"
)

// workers runs each in-process job's goroutines (its supervisor, the wait
// for its reaper's report, the recycling of its directory) on goroutines
// kept for reuse. A new goroutine starts with a small stack and grows it by
// copying, frame by frame, as often as SQLite's and the JSON decoder's
// calls need: about a tenth of a millisecond of CPU per job, paid again for
// every job's new goroutines. One that has run such work keeps its grown
// stack (until garbage collection shrinks an idle one) for the next.
type workers struct {
	tasks  chan func()
	quit   chan struct{}
	closed sync.Once
}

// workerIdle is how long an idle worker waits for more work before it
// ends.
const workerIdle = 2 * time.Second

func newWorkers() *workers {
	return &workers{tasks: make(chan func()), quit: make(chan struct{})}
}

// goRun runs f on an idle worker, or on a new one when none is idle (or w
// is nil: a detached supervisor has one job, nothing to reuse for).
func (w *workers) goRun(f func()) {
	if w == nil {
		go f()
		return
	}
	select {
	case w.tasks <- f:
	default:
		go w.work(f)
	}
}

// work runs f, then whatever it is handed, until it has been idle for
// workerIdle or the workers are closed.
func (w *workers) work(f func()) {
	idle := time.NewTimer(workerIdle)
	defer idle.Stop()
	for {
		f()
		f = nil // let go of what the task held while idle
		idle.Reset(workerIdle)
		select {
		case f = <-w.tasks:
		case <-idle.C:
			return
		case <-w.quit:
			return
		}
	}
}

// close ends the idle workers, once however often it is called; work
// handed over later still runs.
func (w *workers) close() {
	if w != nil {
		w.closed.Do(func() { close(w.quit) })
	}
}
