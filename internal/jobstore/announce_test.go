package jobstore_test

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// announceStep is the step "announce": as a detached supervisor of a
// `bgcmd run` does, it announces the create of a running job (this process
// its supervisor), prints the job's id, and waits for a line on its
// standard input: "land" writes the row and removes the record, as the
// supervisor does next; the end of its input ends the process with the
// record left (a supervisor killed in that window).
func announceStep(ctx context.Context, path string) error {
	self := os.Getpid()
	started := time.Now().UTC().Round(0)
	j := &bgcmd.Job{ID: jobstore.NewID(), Session: "announced", Argv: []string{"/bin/sleep", "1000"},
		Exe: "/bin/sleep", Cwd: "/", EnvNames: []string{"HOME"}, Timeout: time.Minute, KillGrace: time.Second,
		SupervisorPID: self, SupervisorStart: selfStart(), BootID: "boot", Detached: true,
		CreatedAt: started, PID: self, PGID: self, PIDStart: selfStart(), StartedAt: &started,
		Host: "test-host", HostID: os.Getenv(stepIDEnv)}
	a, err := jobstore.Announce(path, j)
	if err != nil {
		return err
	}
	fmt.Println(j.ID)
	line, _ := bufio.NewReader(os.Stdin).ReadString('\n')
	if line != "land\n" {
		return nil // ended with the record left
	}
	s, err := jobstore.Open(ctx, jobstore.Options{Path: path, Host: "test-host", Deferred: true})
	if err != nil {
		return err
	}
	defer s.Close()
	if err := s.Create(ctx, j); err != nil {
		return err
	}
	a.Done()
	fmt.Println("landed")
	return nil
}

// selfStart is this process's start time in clock ticks after boot.
func selfStart() int64 {
	n, _ := strconv.ParseInt(statField("self", 22), 10, 64)
	return n
}

// statField is field n of the /proc stat of the process proc (a pid, or
// "self"), counted after the command's name as proc(5) counts them: "" when
// there is no such process.
func statField(proc string, n int) string {
	b, err := os.ReadFile("/proc/" + proc + "/stat")
	i := strings.LastIndexByte(string(b), ')')
	if err != nil || i < 0 {
		return ""
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) <= n-3 {
		return ""
	}
	return f[n-3]
}

// announcer is a process of announceStep, its job id read.
type announcer struct {
	cmd   *exec.Cmd
	in    io.WriteCloser
	out   *bufio.Reader
	jobID string
}

func startAnnouncer(t *testing.T, path, hostID string) *announcer {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stepEnv+"=announce", stepDBEnv+"="+path, stepIDEnv+"="+hostID,
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	a := &announcer{cmd: cmd, in: in, out: bufio.NewReader(stdout)}
	id, err := a.out.ReadString('\n')
	require.NoError(t, err, "the announcer prints its job's id")
	a.jobID = strings.TrimSpace(id)
	return a
}

// TestAnAnnouncedCreateReadsAsItsRow: a job whose supervisor announced its
// create and has not written the row yet is neither unknown nor missing
// to any reader. A reader waits for a writer that still holds the record,
// and reads the row it writes; the record of a writer that ended first is
// written as the row by the next store to open, once, with every fact the
// writer had, and removed. A read-only store waits too, and writes
// nothing.
func TestAnAnnouncedCreateReadsAsItsRow(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bgcmd.db")
	s, err := jobstore.Open(ctx, jobstore.Options{Path: path, Host: "test-host"})
	require.NoError(t, err)
	defer s.Close()

	// A writer that lands its row: a Get from another process waits for
	// it, and reads the row it wrote.
	a := startAnnouncer(t, path, s.HostID())
	got := make(chan error, 1)
	var rec *jobstore.Record
	go func() {
		var err error
		rec, err = s.Get(ctx, a.jobID)
		got <- err
	}()
	require.Never(t, func() bool { return len(got) > 0 }, 300*time.Millisecond, 10*time.Millisecond,
		"a Get waits while the writer holds its record")
	_, err = io.WriteString(a.in, "land\n")
	require.NoError(t, err)
	require.NoError(t, <-got)
	require.Equal(t, bgcmd.StateRunning, rec.State)
	require.Equal(t, a.cmd.Process.Pid, rec.SupervisorPID)
	line, err := a.out.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "landed\n", line, "the row the Get read is the writer's")
	require.NoError(t, a.cmd.Wait())
	ids, err := os.ReadDir(jobstore.AnnounceDir(path))
	require.NoError(t, err)
	require.Empty(t, ids, "a landed create leaves no record")

	// A writer that ends first: the next store to open writes the row.
	a = startAnnouncer(t, path, s.HostID())
	require.NoError(t, a.in.Close())
	require.NoError(t, a.cmd.Wait())
	require.FileExists(t, filepath.Join(jobstore.AnnounceDir(path), a.jobID))
	ro, err := jobstore.Open(ctx, jobstore.Options{Path: path, ReadOnly: true})
	require.NoError(t, err)
	_, err = ro.Get(ctx, a.jobID)
	require.ErrorIs(t, err, bgcmd.ErrNotFound, "a read-only store writes nothing")
	require.NoError(t, ro.Close())
	require.FileExists(t, filepath.Join(jobstore.AnnounceDir(path), a.jobID), "and leaves the record to a writer")
	reader, err := jobstore.Open(ctx, jobstore.Options{Path: path, Host: "test-host"})
	require.NoError(t, err)
	defer reader.Close()
	rec, err = reader.Get(ctx, a.jobID)
	require.NoError(t, err, "the store that opened wrote the row")
	require.Equal(t, bgcmd.StateRunning, rec.State)
	require.Equal(t, []any{[]string{"/bin/sleep", "1000"}, []string{"HOME"}, time.Minute, time.Second, "announced", true},
		[]any{rec.Argv, rec.EnvNames, rec.Timeout, rec.KillGrace, rec.Session, rec.Detached})
	require.Equal(t, a.cmd.Process.Pid, rec.PID)
	require.NotZero(t, rec.PIDStart)
	require.Equal(t, rec.PIDStart, rec.SupervisorStart)
	require.Equal(t, "boot", rec.BootID)
	require.NoFileExists(t, filepath.Join(jobstore.AnnounceDir(path), a.jobID))
	events, err := reader.Events(ctx, a.jobID)
	require.NoError(t, err)
	require.Len(t, events, 1, "one creation event, as the writer's create has")
	c, err := reader.Counters(ctx, "announced")
	require.NoError(t, err)
	require.Equal(t, 2, c.Running, "the landed job counts as running, beside the one landed before")

	// A List reads the directory once it changed since it was read empty:
	// a record added after such a read is not missed.
	long := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(jobstore.AnnounceDir(path), long, long))
	page, err := reader.List(ctx, jobstore.ListParams{Session: "announced"})
	require.NoError(t, err)
	require.Len(t, page.Jobs, 2)
	a = startAnnouncer(t, path, s.HostID())
	require.NoError(t, a.in.Close())
	require.NoError(t, a.cmd.Wait())
	page, err = reader.List(ctx, jobstore.ListParams{Session: "announced"})
	require.NoError(t, err)
	require.Len(t, page.Jobs, 3, "the List wrote the row of the record added since")
	require.Equal(t, a.jobID, page.Jobs[0].ID)
}

// TestAStoppedAnnouncerIsNotWaitedFor: a job can stop its own supervisor
// (same user) in the window between the announced create and its row. The
// stopped writer holds its record; a reader does not wait for it (it would
// wait for good), and leaves it to reconcile, which ends the writer first.
func TestAStoppedAnnouncerIsNotWaitedFor(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bgcmd.db")
	s, err := jobstore.Open(ctx, jobstore.Options{Path: path, Host: "test-host"})
	require.NoError(t, err)
	defer s.Close()
	a := startAnnouncer(t, path, s.HostID())
	require.NoError(t, a.cmd.Process.Signal(syscall.SIGSTOP))
	require.Eventually(t, func() bool { return procState(a.cmd.Process.Pid) == "T" }, time.Minute, 5*time.Millisecond)

	// A busy timeout longer than the test's: only not waiting returns.
	reader, err := jobstore.Open(ctx, jobstore.Options{Path: path, Host: "test-host", BusyTimeout: time.Hour})
	require.NoError(t, err)
	defer reader.Close()
	_, err = reader.Get(ctx, a.jobID)
	require.ErrorIs(t, err, bgcmd.ErrNotFound)
	announced, err := reader.Announced()
	require.NoError(t, err)
	require.Len(t, announced, 1)
	require.Equal(t, []any{a.jobID, a.cmd.Process.Pid}, []any{announced[0].ID, announced[0].SupervisorPID},
		"the record names its writer, for reconcile to end it")

	// Ended, as reconcile ends it: the record lands.
	require.NoError(t, a.cmd.Process.Kill())
	_ = a.cmd.Wait()
	require.NoError(t, reader.LandAnnounced(ctx))
	rec, err := reader.Get(ctx, a.jobID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateRunning, rec.State)
}

// procState is the state letter of pid's /proc stat.
func procState(pid int) string { return statField(strconv.Itoa(pid), 3) }

// TestAnAnnouncementIsWholeAndPrivate: the record is made whole under a
// temporary name and renamed into place; it is its owner's alone, and
// names the job's variables as the row does (a job holds no values); a
// job without a start is refused.
func TestAnAnnouncementIsWholeAndPrivate(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "bgcmd.db")
	now := time.Now().UTC()
	j := &bgcmd.Job{ID: jobstore.NewID(), Argv: []string{"/bin/true"}, EnvNames: []string{"SECRET_TOKEN"}, StartedAt: &now}
	a, err := jobstore.Announce(path, j)
	require.NoError(t, err)
	defer a.Done()
	entries, err := os.ReadDir(jobstore.AnnounceDir(path))
	require.NoError(t, err)
	require.Len(t, entries, 1, "no temporary file is left")
	require.Equal(t, j.ID, entries[0].Name())
	fi, err := os.Stat(filepath.Join(jobstore.AnnounceDir(path), j.ID))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o600), fi.Mode().Perm())
	di, err := os.Stat(jobstore.AnnounceDir(path))
	require.NoError(t, err)
	require.Equal(t, os.FileMode(0o700), di.Mode().Perm())
	b, err := os.ReadFile(filepath.Join(jobstore.AnnounceDir(path), j.ID))
	require.NoError(t, err)
	require.Contains(t, string(b), "SECRET_TOKEN")
	a.Done()
	require.NoFileExists(t, filepath.Join(jobstore.AnnounceDir(path), j.ID))

	_, err = jobstore.Announce(path, &bgcmd.Job{ID: jobstore.NewID(), Argv: []string{"/bin/true"}})
	require.Error(t, err, "a job whose child has not started is not announced")
	require.False(t, errors.Is(err, os.ErrExist))
}
