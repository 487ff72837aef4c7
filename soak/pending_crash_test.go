package soak

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// TestARunKilledWhileItsCreateIsOpenLeavesNothing: a `bgcmd run --json`
// (which reads the job's status back, and so opens the store: a plain run
// leaves the row to its supervisor, runner.Options.SupervisorWrites) writes
// the job's row in a transaction it holds open while the supervisor starts
// the child (jobstore.PendingCreate), and commits it once the child runs.
// SIGKILLed inside that transaction, it leaves nothing: the kernel drops
// its lock, SQLite its uncommitted write, and the supervisor, whose host
// ended without an answer and whose job no row names, stops the child and
// removes the job's directory. The store takes the next write at once.
//
// The CLI is caught there, not timed: the test stops it (SIGSTOP) once it
// holds the store's write lock with a job directory made, and kills it
// only if, stopped, it still holds the lock. A CLI caught elsewhere (its
// write let go after runner.pendingHold, or not begun) is let run to its
// end, its job released, and the test tries again in a new home.
func TestARunKilledWhileItsCreateIsOpenLeavesNothing(t *testing.T) {
	const attempts = 20
	for attempt := 1; attempt <= attempts; attempt++ {
		if killRunInOpenCreate(t, attempt) {
			t.Logf("caught in attempt %d", attempt)
			return
		}
	}
	t.Fatalf("no `bgcmd run` of %d was caught holding its create open", attempts)
}

// killRunInOpenCreate is one attempt of the test above, in a new home. It
// returns false, having checked nothing, when the CLI was not caught
// inside its create.
func killRunInOpenCreate(t *testing.T, attempt int) bool {
	h := newHome(t, "", defaultPolicy(t))
	t.Cleanup(h.killAll)
	h.mustRun(0, "list") // the store exists
	// The child waits for a file made only when the CLI was not caught:
	// otherwise only its supervisor ends it.
	token := "release-" + strconv.Itoa(os.Getpid()) + "-" + strconv.Itoa(attempt)
	release := filepath.Join(h.root, token)
	argv := []string{fixture(t, "wait-for-file.sh"), release}
	t.Cleanup(func() {
		for _, pid := range processesNaming(token) {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	others := h.supervisors() // another test's, which this one does not wait for
	ours := func() []int {
		return slices.DeleteFunc(h.supervisors(), func(pid int) bool { return slices.Contains(others, pid) })
	}
	cmd := h.command(context.Background(), append([]string{"--json", "run", "--"}, argv...)...)
	require.NoError(t, cmd.Start())
	ended := make(chan error, 1)
	go func() { ended <- cmd.Wait() }()
	probe := openLockProbe(t, h)

	if !catchHoldingTheLock(t, h, cmd, probe, ended) {
		// On record and running: its end leaves no supervisor of it for
		// the next attempt to wait for.
		require.NoError(t, os.WriteFile(release, nil, 0o600))
		awaitGone(t, ours())
		return false
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	require.Error(t, <-ended, "the CLI was killed")

	// The supervisor stops the child it was handed and ends.
	eventually(t, time.Minute, "no process of the job left", func() (bool, string) {
		pids := processesNaming(token)
		return len(pids) == 0, fmt.Sprintf("processes %v still run the job", pids)
	})
	awaitGone(t, ours())
	require.False(t, probe.held(t), "the killed CLI's write lock outlived it")

	st := h.openRO()
	defer st.Close()
	ctx := context.Background()
	res, err := st.List(ctx, jobstore.ListParams{})
	require.NoError(t, err)
	require.Empty(t, res.Jobs, "a create that never committed left no job")
	events, err := queryInts(ctx, st, `SELECT COUNT(*) FROM job_events`)
	require.NoError(t, err)
	require.Equal(t, [][]int64{{0}}, events, "nor any event of one")
	require.Empty(t, jobDirs(t, h), "nor the job's directory")

	// The next run writes, and reconcile finds nothing to settle.
	id := strings.TrimSpace(string(h.mustRun(0, "run", "--", "/bin/true").stdout))
	h.mustRun(0, "wait", id)
	h.mustRun(0, "reconcile")
	res, err = st.List(ctx, jobstore.ListParams{})
	require.NoError(t, err)
	require.Len(t, res.Jobs, 1, "the one job on record")
	require.Equal(t, id, res.Jobs[0].ID)
	requireIntegrity(t, h)
	return true
}

// catchHoldingTheLock stops the running `bgcmd run` cmd (SIGSTOP) once it
// holds the store's write lock with a job's directory made, which, in a
// home no other process writes to, is its create of the job. It returns
// true with the CLI stopped there; false, with the CLI let run to its end,
// when the CLI ended or let the lock go before it was stopped.
func catchHoldingTheLock(t *testing.T, h *home, cmd *exec.Cmd, probe *lockProbe, ended <-chan error) bool {
	t.Helper()
	for {
		select {
		case err := <-ended:
			require.NoError(t, err, "the run the test meant to catch failed")
			return false
		default:
		}
		if len(jobDirs(t, h)) == 0 || !probe.held(t) {
			time.Sleep(100 * time.Microsecond)
			continue
		}
		require.NoError(t, cmd.Process.Signal(syscall.SIGSTOP))
		if !awaitStopped(t, cmd.Process.Pid) {
			// It ended between the probe and the signal.
			require.NoError(t, <-ended, "the run the test meant to catch failed")
			return false
		}
		if probe.held(t) {
			return true // stopped holding it: no one else writes here
		}
		require.NoError(t, cmd.Process.Signal(syscall.SIGCONT))
		require.NoError(t, <-ended, "the run let go by the test failed")
		return false
	}
}

// lockProbe asks whether some process holds the store's write lock,
// without waiting for it: a BEGIN IMMEDIATE that fails busy at once.
type lockProbe struct{ db *sql.DB }

func openLockProbe(t *testing.T, h *home) *lockProbe {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+h.dbPath()+"?_pragma=busy_timeout(0)&_txlock=immediate")
	require.NoError(t, err)
	db.SetMaxOpenConns(1)
	t.Cleanup(func() { db.Close() })
	return &lockProbe{db: db}
}

// held says whether another connection holds the write lock. Taken, the
// lock is given back at once.
func (p *lockProbe) held(t *testing.T) bool {
	t.Helper()
	tx, err := p.db.Begin()
	if err == nil {
		require.NoError(t, tx.Rollback())
		return false
	}
	var se *sqlite.Error
	require.True(t, errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY, "probe the write lock: %v", err)
	return true
}

// awaitStopped waits until process pid is stopped by a signal, and says
// whether it was: false when it ended instead (a zombie, or reaped), the
// signal having come after its last instruction.
func awaitStopped(t *testing.T, pid int) bool {
	t.Helper()
	stopped := false
	eventually(t, time.Minute, fmt.Sprintf("process %d stopped or ended", pid), func() (bool, string) {
		p, ok := readProc(pid)
		if !ok || p.state == 'Z' || p.state == 'X' {
			return true, ""
		}
		stopped = p.state == 'T'
		return stopped, fmt.Sprintf("state %q", p.state)
	})
	return stopped
}

// jobDirs lists the job directories of home h (its hidden files aside).
func jobDirs(t *testing.T, h *home) []string {
	t.Helper()
	ents, err := os.ReadDir(filepath.Join(h.dir, "jobs"))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	require.NoError(t, err)
	var dirs []string
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), ".") {
			dirs = append(dirs, e.Name())
		}
	}
	return dirs
}

// processesNaming lists the live processes whose argv holds s.
func processesNaming(s string) []int {
	var pids []int
	for _, p := range liveProcs() {
		if strings.Contains(cmdline(p.pid), s) {
			pids = append(pids, p.pid)
		}
	}
	return pids
}
