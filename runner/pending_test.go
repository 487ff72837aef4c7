//go:build linux

package runner_test

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/runner"
)

// requireRecordedStart checks the row of a detached job that Start
// returned: running or settled, with the child Start reported (pid, start
// time), one creation event first, and the store's chain intact.
func requireRecordedStart(t *testing.T, e *env, j *bgcmd.Job) {
	t.Helper()
	ctx := context.Background()
	require.Positive(t, j.PID)
	require.NotNil(t, j.StartedAt)
	rec, err := e.store.Get(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, j.PID, rec.PID, "the row names the child Start reported")
	require.Equal(t, j.PID, rec.PGID)
	require.Positive(t, rec.PIDStart)
	require.NotNil(t, rec.StartedAt)
	require.True(t, j.StartedAt.Equal(*rec.StartedAt))
	require.Equal(t, j.SupervisorPID, rec.SupervisorPID)
	evs, err := e.store.Events(ctx, j.ID)
	require.NoError(t, err)
	require.NotEmpty(t, evs)
	require.Equal(t, bgcmd.State(""), evs[0].From, "the creation event comes first")
	require.Equal(t, bgcmd.StateRunning, evs[0].To)
	rep, err := e.store.VerifyChain(ctx, jobstore.VerifyChainParams{})
	require.NoError(t, err)
	require.Nil(t, rep.Problem)
}

// A detached start writes its row while the supervisor starts the child
// and commits it with the child's start; one whose write was let go (the
// child slower to start than the runner holds the write lock for) writes
// it whole instead. Either way the job is on record as the start reported
// it, and ends as it ran.
func TestADetachedStartRecordsItsChildWhetherItsWriteWasHeldOrLetGo(t *testing.T) {
	t.Parallel()
	for _, letGo := range []bool{false, true} {
		e := newEnv(t, true)
		if letGo {
			runner.SetPendingHold(e.r, time.Nanosecond)
		}
		for code := range 3 {
			j := e.start([]string{fixture(t, "exit-with.sh"), string(rune('0' + code))}, runner.StartOptions{})
			requireRecordedStart(t, e, j)
			s := e.await(j.ID)
			require.Equal(t, bgcmd.StateExited, s.State, "let go %v: %s", letGo, s.Error)
			require.Equal(t, code, *s.ExitCode)
		}
	}
}

// Starts at once from one host hold the store's write lock one after the
// other, and a writer in another process meanwhile waits its turn: every
// start and every write of the other store lands, none fails busy.
func TestConcurrentDetachedStartsAndAnotherWriterAllLand(t *testing.T) {
	t.Parallel()
	e := newEnv(t, true)
	ctx := context.Background()
	other, err := jobstore.Open(ctx, jobstore.Options{Path: filepath.Join(e.home, "bgcmd.db"), Host: "other"})
	require.NoError(t, err)
	defer other.Close()

	stop := make(chan struct{})
	var written []string
	var writerErr error
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
			}
			j := &bgcmd.Job{Session: "other", Argv: []string{"/bin/true"}, Exe: "/bin/true", Cwd: "/",
				Timeout: time.Minute, KillGrace: time.Second, MaxOutputBytes: 1 << 20}
			if writerErr = other.Create(ctx, j); writerErr != nil {
				return
			}
			written = append(written, j.ID)
		}
	}()

	const starts = 6
	jobs := make([]*bgcmd.Job, starts)
	errs := make([]error, starts)
	var sw sync.WaitGroup
	for i := range starts {
		sw.Add(1)
		go func() {
			defer sw.Done()
			jobs[i], errs[i] = e.r.Start(ctx, []string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{})
		}()
	}
	sw.Wait()
	close(stop)
	wg.Wait()
	require.NoError(t, writerErr, "the other process's writes waited for the lock, none failed")
	require.NotEmpty(t, written)
	for i := range starts {
		require.NoError(t, errs[i], "start %d", i)
		requireRecordedStart(t, e, jobs[i])
		require.Equal(t, bgcmd.StateExited, e.await(jobs[i].ID).State)
	}
	for _, id := range written {
		_, err := e.store.Get(ctx, id)
		require.NoError(t, err)
	}
}
