package runner

import (
	"bytes"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// goroutineID is the running goroutine's number, as its stack trace
// gives it: the runtime never gives a number twice.
func goroutineID(t *testing.T) uint64 {
	buf := make([]byte, 64)
	buf = buf[:runtime.Stack(buf, false)]
	f := bytes.Fields(buf)
	require.GreaterOrEqual(t, len(f), 2, "stack: %q", buf)
	id, err := strconv.ParseUint(string(f[1]), 10, 64)
	require.NoError(t, err)
	return id
}

func TestWorkersRunTheNextTaskOnAnIdleWorker(t *testing.T) {
	w := newWorkers()
	defer w.close()
	seen := map[uint64]bool{}
	deadline := time.Now().Add(10 * time.Second)
	for {
		ran := make(chan uint64)
		w.goRun(func() { ran <- goroutineID(t) })
		id := <-ran
		if seen[id] {
			return // a goroutine that had run a task ran this one
		}
		seen[id] = true
		require.True(t, time.Now().Before(deadline), "%d tasks, each on a new goroutine", len(seen))
		runtime.Gosched() // let the worker reach its wait for more
	}
}

func TestWorkersStillRunWhatIsHandedOverAfterClose(t *testing.T) {
	w := newWorkers()
	done := make(chan struct{})
	w.goRun(func() { done <- struct{}{} })
	<-done
	w.close()
	w.close() // a runner may be closed twice
	w.goRun(func() { close(done) })
	<-done
	var none *workers // a detached supervisor's: a new goroutine each time
	ran := make(chan struct{})
	none.goRun(func() { close(ran) })
	<-ran
	none.close()
}
