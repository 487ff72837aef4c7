package runner

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// pendingSettle is a job whose command has ended and whose supervisor
// cannot write the terminal row yet: another connection holds the
// database's write lock.
type pendingSettle struct {
	st   *jobstore.Store
	r    *Runner
	sup  *supervisor
	job  *bgcmd.Job
	lock *sql.Tx
}

// newPendingSettle makes a running job (its supervisor pid is a dead
// process, as after the supervisor gave up) with a stdout log, and takes
// the database's write lock from another connection.
func newPendingSettle(t *testing.T) *pendingSettle {
	t.Helper()
	ctx := context.Background()
	o := newOrphan(t, jobstore.Options{BusyTimeout: 10 * time.Millisecond})
	st, r, j, dir := o.st, o.r, o.job, o.dir
	db := o.st.Path()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "stdout.log"), []byte("all of it\n"), 0o600))

	other, err := sql.Open("sqlite", "file:"+db+"?_pragma=busy_timeout(10000)&_txlock=immediate")
	require.NoError(t, err)
	t.Cleanup(func() { other.Close() })
	lock, err := other.BeginTx(ctx, nil)
	require.NoError(t, err)
	t.Cleanup(func() { _ = lock.Rollback() })
	// The lock is taken at the first statement of the transaction.
	_, err = lock.ExecContext(ctx, `UPDATE jobs SET error = error WHERE id = ?`, j.ID)
	require.NoError(t, err)

	sup := &supervisor{store: st, arts: r.arts, job: j, dir: dir, now: st.Now}
	return &pendingSettle{st: st, r: r, sup: sup, job: j, lock: lock}
}

// settle runs the supervisor's settle of an exit 0 in the background and
// returns a channel closed when it returns.
func (p *pendingSettle) settle(ctx context.Context) <-chan struct{} {
	done := make(chan struct{})
	code := 0
	go func() {
		defer close(done)
		p.sup.settle(ctx, &outcome{state: bgcmd.StateExited, exitCode: &code}, nil)
	}()
	return done
}

// awaitExitRecord waits until the pending settle has put its whole exit
// record on disk, and checks that the job is still running. The record is
// written in place with no rename (writeExitRecordUnsynced): a read between
// the file's creation and its write sees it empty, which only means not
// yet; the one reader the product has, reconcile, reads it only once its
// writer has ended.
func (p *pendingSettle) awaitExitRecord(t *testing.T) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		rec, err := readExitRecord(p.sup.dir)
		if err == nil && rec != nil {
			require.Equal(t, bgcmd.StateExited, rec.State)
			break
		}
		require.True(t, time.Now().Before(deadline), "no whole exit record in %s while the settle is pending (last read: %v)", p.sup.dir, err)
		time.Sleep(5 * time.Millisecond) // polling for the file, with a deadline
	}
	got, err := p.st.Get(context.Background(), p.job.ID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateRunning, got.State, "the row cannot be written while the lock is held")
}

// TestPendingSettleStopsWithItsContext: a supervisor whose terminal write
// keeps failing stops retrying when its context ends (not after the whole
// retry window), leaving the job running with its exit record and its
// logs, from which a reconciler then settles it with the true outcome.
func TestPendingSettleStopsWithItsContext(t *testing.T) {
	t.Parallel()
	p := newPendingSettle(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := p.settle(ctx)
	p.awaitExitRecord(t)

	cancel()
	select {
	case <-done:
	case <-time.After(settleRetryFor / 2):
		t.Fatalf("the settle was still retrying %s after its context ended", settleRetryFor/2)
	}
	got, err := p.st.Get(context.Background(), p.job.ID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateRunning, got.State)
	_, err = os.Stat(filepath.Join(p.sup.dir, exitRecordName))
	require.NoError(t, err, "the exit record stays for the reconciler")

	require.NoError(t, p.lock.Rollback())
	rep, err := p.r.Reconcile(context.Background())
	require.NoError(t, err)
	require.Equal(t, 1, rep.FromExitRecord, "settled from the exit record the pending settle left: %+v", rep)
	got, err = p.st.Get(context.Background(), p.job.ID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateExited, got.State)
	require.NotNil(t, got.ExitCode)
	require.Equal(t, 0, *got.ExitCode)
	res, err := p.r.ReadOutput(context.Background(), p.job.ID, bgcmd.Stdout, artifacts.Page{})
	require.NoError(t, err)
	require.Equal(t, "all of it\n", res.Text)
}

// TestPendingSettleCompletesOnceTheStoreTakesIt: the retry wakes by itself
// after the lock is released and settles the job with its output banked,
// then removes the job directory.
func TestPendingSettleCompletesOnceTheStoreTakesIt(t *testing.T) {
	t.Parallel()
	p := newPendingSettle(t)
	done := p.settle(context.Background())
	p.awaitExitRecord(t)

	require.NoError(t, p.lock.Rollback())
	select {
	case <-done:
	case <-time.After(settleRetryFor / 2):
		t.Fatalf("the settle did not complete within %s of the lock's release", settleRetryFor/2)
	}
	got, err := p.st.Get(context.Background(), p.job.ID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateExited, got.State)
	arts, err := p.st.Artifacts(context.Background(), p.job.ID)
	require.NoError(t, err)
	require.Len(t, arts, 2)
	pendingHooks.Wait() // the directory is removed in the background, as Close waits for
	_, err = os.Stat(p.sup.dir)
	require.True(t, os.IsNotExist(err), "the job directory is removed once settled: %v", err)
	res, err := p.r.ReadOutput(context.Background(), p.job.ID, bgcmd.Stdout, artifacts.Page{})
	require.NoError(t, err)
	require.Equal(t, "all of it\n", res.Text)
}
