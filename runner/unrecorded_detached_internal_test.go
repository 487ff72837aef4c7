//go:build linux

package runner

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// handUnrecorded hands a detached supervisor, as Start does, a job with no
// row yet that runs wait-for-file.sh on marker, and returns the supervisor,
// the job as its report says it runs (pid and start), the job's directory
// and the store. jobFollows is the supervisor's openMsg.JobFollows: true
// as for a supervisor started for the job, false as for a spare.
func handUnrecorded(t *testing.T, marker string, jobFollows bool) (*supProc, *bgcmd.Job, string, *jobstore.Store) {
	t.Helper()
	script, err := filepath.Abs(filepath.Join("..", "testdata", "wait-for-file.sh"))
	require.NoError(t, err)
	p, job, dir, st, line := handOverUnrecorded(t, []string{script, marker}, jobFollows)
	var sr startedReport
	require.True(t, strings.HasPrefix(line, "ok {"), "the report carries the pid: %q", line)
	require.NoError(t, json.Unmarshal([]byte(strings.TrimPrefix(line, "ok ")), &sr))
	require.Positive(t, sr.PID)
	return p, sr.job(job, p), dir, st
}

// handOverUnrecorded hands a new detached supervisor of a new store, as
// Start does, a job with no row yet that runs argv, and returns the
// supervisor, the job, its directory, the store and the supervisor's
// report.
func handOverUnrecorded(t *testing.T, argv []string, jobFollows bool) (*supProc, *bgcmd.Job, string, *jobstore.Store, string) {
	t.Helper()
	st, home := tempStore(t)
	job := &bgcmd.Job{ID: jobstore.NewID(), Session: "s", Argv: argv, Exe: argv[0], Cwd: "/",
		Timeout: time.Minute, KillGrace: time.Second, MaxOutputBytes: 1 << 20, Detached: true,
		State: bgcmd.StateRunning, CreatedAt: time.Now().UTC()}
	dir := filepath.Join(home, "jobs", job.ID)
	require.NoError(t, os.MkdirAll(dir, 0o700))
	logf, err := os.Create(filepath.Join(dir, "supervisor.log"))
	require.NoError(t, err)
	defer logf.Close()
	cwd, err := os.Open("/")
	require.NoError(t, err)
	defer cwd.Close()

	p, err := spawnSupervisor(os.Args[0], openMsg{DBPath: st.Path(), Host: st.Host(), HostID: st.HostID(),
		JobFollows: jobFollows}, logf)
	require.NoError(t, err)
	t.Cleanup(func() { p.conn.Close(); <-p.exited })
	job.SupervisorPID, job.SupervisorStart = p.pid, p.start
	require.NoError(t, sendLine(p.conn, &spec{Home: home, DBPath: st.Path(), JobID: job.ID,
		HostPID: p.pid, HostStart: p.start, Job: newSpecJob(job), Unrecorded: true}, cwd, logf))
	rr := newReportReader(p.status, p.exe)
	line, err := rr.report()
	require.NoError(t, err)
	require.True(t, rr.taken, "the supervisor said it took the job")
	return p, job, dir, st, line
}

// releaseToExit releases the job that waits for marker, waits for its
// supervisor p to end, and returns the job's row, checked to say it
// exited 0.
func releaseToExit(t *testing.T, p *supProc, st *jobstore.Store, marker, id string) *jobstore.Record {
	t.Helper()
	require.NoError(t, os.WriteFile(marker, nil, 0o600))
	awaitSupervisorExit(t, p, "the supervisor did not end with its job")
	rec, err := st.Get(context.Background(), id)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateExited, rec.State, "error: %s", rec.Error)
	require.Equal(t, 0, *rec.ExitCode)
	return rec
}

// awaitSupervisorExit waits for supervisor p to exit, failing the test
// with msg if it has not within a generous deadline.
func awaitSupervisorExit(t *testing.T, p *supProc, msg string) {
	t.Helper()
	select {
	case <-p.exited:
	case <-time.After(30 * time.Second):
		t.Fatal(msg)
	}
}

// pollUntil polls cond until it holds, failing the test at a deadline.
func pollUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// tempStore opens a new store in a new home, closed when the test ends.
func tempStore(t *testing.T) (*jobstore.Store, string) {
	t.Helper()
	home := t.TempDir()
	st, err := jobstore.Open(context.Background(), jobstore.Options{Path: filepath.Join(home, "bgcmd.db")})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st, home
}

// TestADetachedSupervisorStopsAJobItsHostNeverRecorded: a host that dies
// after its supervisor reported the child's pid, before it wrote the job's
// row, leaves a job no row names: the supervisor, seeing the host's end of
// the socket close with no answer, kills it, writes nothing and exits.
func TestADetachedSupervisorStopsAJobItsHostNeverRecorded(t *testing.T) {
	t.Parallel()
	for _, follows := range []bool{true, false} {
		t.Run(fmt.Sprintf("job follows %v", follows), func(t *testing.T) {
			t.Parallel()
			stopsAJobItsHostNeverRecorded(t, follows)
		})
	}
}

// stopsAJobItsHostNeverRecorded is the test above for a supervisor whose
// openMsg.JobFollows is jobFollows.
func stopsAJobItsHostNeverRecorded(t *testing.T, jobFollows bool) {
	marker := filepath.Join(t.TempDir(), "release")
	p, running, dir, st := handUnrecorded(t, marker, jobFollows)
	pid := running.PID
	require.False(t, jobGone(pid), "the job runs")

	p.conn.Close() // the host dies before recording the job
	awaitSupervisorExit(t, p, "the supervisor of an unrecorded job did not exit")
	require.True(t, jobGone(pid), "the supervisor killed the unrecorded job")
	require.NoDirExists(t, dir, "a job never on record leaves nothing behind")
	res, err := st.List(context.Background(), jobstore.ListParams{})
	require.NoError(t, err)
	require.Empty(t, res.Jobs, "the supervisor wrote no row for a job its host never recorded")
}

// TestADetachedSupervisorRunsTheJobItsHostRecorded: once the host has
// written the row, the supervisor watches the job to its end and settles
// it, the host gone or not: after the host's answer, and also when the host
// died between its write of the row and its answer (the supervisor, seeing
// the socket end with no answer, reads the row and finds the job running
// under its own name; the soak found that window as an orphaned job that
// should have timed out).
func TestADetachedSupervisorRunsTheJobItsHostRecorded(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ answered, follows bool }{{true, true}, {false, true}, {true, false}, {false, false}} {
		answered := c.answered
		t.Run(fmt.Sprintf("answered %v, job follows %v", answered, c.follows), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			marker := filepath.Join(t.TempDir(), "release")
			p, running, _, st := handUnrecorded(t, marker, c.follows)
			require.NoError(t, st.Create(ctx, running))
			if answered {
				_, err := p.conn.Write([]byte{ackRecorded})
				require.NoError(t, err)
			}
			p.conn.Close() // the host dies after its write

			rec := releaseToExit(t, p, st, marker, running.ID)
			require.Equal(t, running.PID, rec.PID, "the row names the child from the start")
			arts, err := st.Artifacts(ctx, running.ID)
			require.NoError(t, err)
			require.Len(t, arts, 2, "both streams banked")
		})
	}
}
