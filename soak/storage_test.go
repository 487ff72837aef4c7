package soak

import (
	"bufio"
	"bytes"
	"context"
	"database/sql"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// mountTmpfs mounts a tmpfs of size bytes on a fresh directory and
// unmounts it in cleanup; it skips the test where mounting is not allowed.
func mountTmpfs(t *testing.T, size int64) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+strconv.FormatInt(size, 10)); err != nil {
		t.Skipf("cannot mount a %d-byte tmpfs on %s (%v): this test needs root or CAP_SYS_ADMIN", size, dir, err)
	}
	t.Cleanup(func() {
		// A supervisor still holding a file keeps the mount busy: detach it.
		if err := syscall.Unmount(dir, 0); err != nil {
			if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
				t.Errorf("unmount %s: %v", dir, err)
			}
		}
	})
	return dir
}

// freeBytes is what the filesystem holding dir has left for an ordinary
// writer.
func freeBytes(t *testing.T, dir string) int64 {
	var st syscall.Statfs_t
	require.NoError(t, syscall.Statfs(dir, &st))
	return int64(st.Bavail) * st.Bsize
}

// fill writes a file of n bytes at path (or as much as fits).
func fill(t *testing.T, path string, n int64) {
	f, err := os.Create(path)
	require.NoError(t, err)
	buf := make([]byte, 64<<10)
	for n > 0 {
		w, err := f.Write(buf[:min(int64(len(buf)), n)])
		n -= int64(w)
		if err != nil {
			break
		}
	}
	require.NoError(t, f.Close())
}

// soakFixture returns the absolute path of a script in soak/testdata.
func soakFixture(t testing.TB, name string) string {
	t.Helper()
	p, err := filepath.Abs(filepath.Join("testdata", name))
	require.NoError(t, err)
	return p
}

// fullDiskHome is a home on an 8 MiB tmpfs whose policy also allows
// print-then-wait.sh, with its database created while there is room.
func fullDiskHome(t *testing.T) (h *home, mnt string) {
	mnt = mountTmpfs(t, 8<<20)
	pol := defaultPolicy(t)
	pol.Allowed = append(pol.Allowed, soakFixture(t, "print-then-wait.sh"))
	h = newHome(t, filepath.Join(mnt, "home"), pol)
	t.Cleanup(h.killAll)
	h.mustRun(0, "run", "--wait", "--", fixture(t, "print-bytes.sh"), "1000")
	return h, mnt
}

// gatedJob is a running print-then-wait.sh job: it prints its bytes when
// the test creates its go file and exits once the release file exists.
type gatedJob struct {
	id, goFile string
	bytes      int
}

// startGated starts a print-then-wait.sh job that will print n bytes.
func startGated(t *testing.T, h *home, name string, n int, release string) *gatedJob {
	t.Helper()
	g := &gatedJob{goFile: filepath.Join(h.root, "go-"+name), bytes: n}
	res := h.mustRun(0, "--json", "run", "--timeout", "10m", "--", soakFixture(t, "print-then-wait.sh"), g.goFile, strconv.Itoa(n), release)
	g.id = statusOf(t, res).ID
	return g
}

// truncateWAL checkpoints the home's database and empties its write-ahead
// log, so that the next write needs new space on the disk.
func truncateWAL(t *testing.T, h *home) {
	t.Helper()
	db, err := sql.Open("sqlite", "file:"+h.dbPath()+"?_pragma=busy_timeout(30000)")
	require.NoError(t, err)
	defer db.Close()
	eventually(t, time.Minute, "the write-ahead log to be checkpointed and emptied", func() (bool, string) {
		var busy, frames, done int
		if err := db.QueryRow(`PRAGMA wal_checkpoint(TRUNCATE)`).Scan(&busy, &frames, &done); err != nil {
			return false, err.Error()
		}
		fi, err := os.Stat(h.dbPath() + "-wal")
		if err != nil {
			return false, err.Error()
		}
		return busy == 0 && fi.Size() == 0, fmt.Sprintf("busy %d, %d-byte log", busy, fi.Size())
	})
}

// keptBytes is what a job's error says it kept of its stdout, if it says.
var keptBytes = regexp.MustCompile(`kept (\d+) bytes of stdout`)

// TestDiskFull puts the home on an 8 MiB tmpfs and lets the output of
// running jobs fill it, each job printing a known amount at a moment the
// test chooses: the database stays consistent while the disk is full; a job
// whose output no longer fits is stopped at once (not at its timeout) and,
// once space is freed, settles as exited by bgcmd's SIGKILL, never killed,
// with an error that says its output could not be written, stopped_by
// output_write_error in the settle event and exit code 1 from wait; every
// byte it did write is banked; a job that fitted keeps all its output, and
// new jobs run and bank every byte.
func TestDiskFull(t *testing.T) {
	h, mnt := fullDiskHome(t)
	ctx := context.Background()
	st := h.openRO()
	defer st.Close()

	// Three jobs that print when told and then wait to be released: one
	// fits, one is cut short mid-output, one finds the disk full at its
	// first byte. Their timeout is far away, so it cannot be what ends them.
	release := filepath.Join(h.root, "release")
	fits := startGated(t, h, "fits", 1<<20, release)
	cut := startGated(t, h, "cut", 3<<20, release)
	full := startGated(t, h, "full", 3<<20, release)
	logOf := func(g *gatedJob) string { return filepath.Join(h.dir, "jobs", g.id, "stdout.log") }
	childGone := func(g *gatedJob) func() (bool, string) {
		return func() (bool, string) {
			rec, err := st.Get(ctx, g.id)
			if err != nil {
				return false, err.Error()
			}
			return rec.PID > 0 && !isProcess(rec.PID, rec.PIDStart), fmt.Sprintf("state %s, pid %d, %d bytes free", rec.State, rec.PID, freeBytes(t, mnt))
		}
	}

	// Leave room for the first job's output and half a megabyte more; an
	// empty write-ahead log makes the store need space for its next write.
	truncateWAL(t, h)
	filler := filepath.Join(mnt, "filler")
	fill(t, filler, freeBytes(t, mnt)-(3<<19))

	require.NoError(t, os.WriteFile(fits.goFile, nil, 0o600))
	eventually(t, time.Minute, "the first job's output to reach its log", func() (bool, string) {
		fi, err := os.Stat(logOf(fits))
		if err != nil {
			return false, err.Error()
		}
		return fi.Size() == int64(fits.bytes), fmt.Sprintf("%d bytes", fi.Size())
	})
	require.NoError(t, os.WriteFile(cut.goFile, nil, 0o600))
	eventually(t, time.Minute, "the second job to be stopped once the disk filled up mid-output", childGone(cut))
	require.Less(t, freeBytes(t, mnt), int64(64<<10), "the second job's output filled the disk")
	require.NoError(t, os.WriteFile(full.goFile, nil, 0o600))
	eventually(t, time.Minute, "the third job to be stopped at its first byte on the full disk", childGone(full))
	requireIntegrity(t, h) // consistent while full
	for _, g := range []*gatedJob{cut, full} {
		rec, err := st.Get(ctx, g.id)
		require.NoError(t, err)
		require.Equal(t, bgcmd.StateRunning, rec.State, "job %s settled on a full disk: its settle must wait for space (error %q)", g.id, rec.Error)
	}

	// Free the space; nothing can take it again (the first job waits to be
	// released, the others are gone): both stopped jobs settle, saying what
	// happened to their output and keeping every byte they wrote.
	require.NoError(t, os.Remove(filler))
	for _, g := range []*gatedJob{cut, full} {
		eventually(t, time.Minute, "job "+g.id+" to settle once space was freed", func() (bool, string) {
			rec, err := st.Get(ctx, g.id)
			if err != nil {
				return false, err.Error()
			}
			return rec.State.Settled(), fmt.Sprintf("state %s, error %q, %d bytes free", rec.State, rec.Error, freeBytes(t, mnt))
		})
		rec, err := st.Get(ctx, g.id)
		require.NoError(t, err)
		require.NotEqual(t, bgcmd.StateTimeout, rec.State, "the disk filling up, not the timeout, ended job %s", g.id)
		require.Regexp(t, `stdout[^;]*no space left on device`, rec.Error,
			"job %s (%s): its error must say its output could not be written", g.id, rec.State)
		// bgcmd stopped it for its own reason: not killed (that is a kill
		// request, exit 137), but exited by the signal bgcmd sent, with the
		// reason in the event and bgcmd's runtime exit code.
		require.Equal(t, bgcmd.StateExited, rec.State, "job %s: a job whose output could not be written is never killed", g.id)
		if rec.ExitCode == nil {
			require.Equal(t, "SIGKILL", rec.Signal, "job %s was stopped by bgcmd's signal", g.id)
		}
		events, err := st.Events(ctx, g.id)
		require.NoError(t, err)
		last := events[len(events)-1]
		require.Equal(t, bgcmd.StateExited, last.To)
		require.Equal(t, "output_write_error", last.Detail["stopped_by"], "job %s: the settle event names why bgcmd stopped it", g.id)
		require.Contains(t, last.Detail["output_write_error"], "no space left on device")
		h.mustRun(1, "wait", g.id)
		arts, err := st.Artifacts(ctx, g.id)
		require.NoError(t, err)
		require.Len(t, arts, 2, "job %s: both streams banked", g.id)
		for _, a := range arts {
			if a.Stream != bgcmd.Stdout {
				continue
			}
			require.Less(t, a.Bytes, int64(g.bytes), "job %s: its output cannot all have fitted", g.id)
			require.Equal(t, sha(alphabet(int(a.Bytes))), a.SHA256, "job %s: the bytes it wrote are banked as written", g.id)
			if m := keptBytes.FindStringSubmatch(rec.Error); m != nil {
				require.Equal(t, m[1], strconv.FormatInt(a.Bytes, 10), "job %s: its error says what it kept, and that is what was banked", g.id)
			}
			if g == cut {
				require.Positive(t, a.Bytes, "job %s had room for part of its output", g.id)
			}
		}
	}

	// The job that fitted has all of its output once released.
	require.NoError(t, os.WriteFile(release, nil, 0o600))
	res := h.mustRun(0, "--json", "wait", fits.id, "--timeout", "1m")
	s := statusOf(t, res)
	require.Equal(t, bgcmd.StateExited, s.State)
	require.Empty(t, s.Error)
	require.Equal(t, int64(fits.bytes), s.Stdout.Bytes)
	require.Equal(t, sha(alphabet(fits.bytes)), s.Stdout.SHA256, "the job whose output fitted keeps every byte")

	// New jobs run and keep every byte.
	res = h.mustRun(0, "--json", "run", "--wait", "--", fixture(t, "print-bytes.sh"), strconv.Itoa(2<<20), "out", "after")
	s = statusOf(t, res)
	require.Equal(t, bgcmd.StateExited, s.State)
	require.Equal(t, int64(2<<20), s.Stdout.Bytes)
	require.Equal(t, sha(alphabet(2<<20)), s.Stdout.SHA256, "every byte banked once there is room")
	h.mustRun(0, "reconcile")
	requireIntegrity(t, h)
	rows, err := queryInts(ctx, st, `SELECT COUNT(*) FROM jobs WHERE state = 'running'`)
	require.NoError(t, err)
	require.Equal(t, int64(0), rows[0][0], "no job left running")
}

// clearFullDisk is what an error about a full disk must say.
var clearFullDisk = regexp.MustCompile(`(?i)no space left|disk is full`)

// TestStartOnFullDisk: a start on a full disk fails with a clear error (or
// succeeds), promptly, and leaves no half-made job running once space is
// back; after that, starts work again.
func TestStartOnFullDisk(t *testing.T) {
	h, mnt := fullDiskHome(t)
	filler := filepath.Join(mnt, "filler")
	fill(t, filler, freeBytes(t, mnt)+1<<20) // as much as fits
	require.Less(t, freeBytes(t, mnt), int64(64<<10))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range 2 {
		res, err := h.run(ctx, "--json", "run", "--", fixture(t, "exit-with.sh"), "0", "full-"+strconv.Itoa(i))
		require.NoError(t, err, "bgcmd run on a full disk did not return within a minute")
		t.Logf("start %d on the full disk: exit %d, stderr %q", i, res.code, bytes.TrimSpace(res.stderr))
		if res.code != 0 && !clearFullDisk.Match(res.stderr) {
			// Keep going: what follows is checked either way.
			t.Errorf("a start refused on a full disk must say the disk is full: %s", res)
		}
	}
	require.NoError(t, os.Remove(filler))
	res, err := h.run(ctx, "--json", "reconcile")
	require.NoError(t, err, "bgcmd reconcile once space was back did not return within a minute")
	require.Equal(t, 0, res.code, "%s", res)
	st := h.openRO()
	defer st.Close()
	rows, err := queryStrings(ctx, st, `SELECT id, state, error FROM jobs WHERE state = 'running'`)
	require.NoError(t, err)
	require.Empty(t, rows, "no half-made job left running")
	res, err = h.run(ctx, "--json", "run", "--wait", "--", fixture(t, "exit-with.sh"), "0", "after")
	require.NoError(t, err)
	require.Equal(t, 0, res.code, "%s", res)
	requireIntegrity(t, h)
}

// killAll SIGKILLs the supervisor and the process group of every job of the
// home still running (a test that failed midway), so nothing outlives it.
func (h *home) killAll() {
	st, err := jobstore.Open(context.Background(), jobstore.Options{Path: h.dbPath(), ReadOnly: true})
	if err != nil {
		return
	}
	defer st.Close()
	recs, err := st.List(context.Background(), jobstore.ListParams{States: []bgcmd.State{bgcmd.StateRunning}, Limit: jobstore.MaxListLimit})
	if err != nil {
		return
	}
	for _, r := range recs.Jobs {
		if strings.Contains(cmdline(r.SupervisorPID), "__supervise") {
			sigkill(r.SupervisorPID, r.SupervisorStart)
		}
		if r.PGID > 1 && isProcess(r.PGID, r.PIDStart) {
			_ = syscall.Kill(-r.PGID, syscall.SIGKILL)
		}
	}
}

// requireIntegrity checks PRAGMA integrity_check on the home's database.
func requireIntegrity(t *testing.T, h *home) {
	t.Helper()
	st := h.openRO()
	defer st.Close()
	rows, err := queryStrings(context.Background(), st, `PRAGMA integrity_check`)
	require.NoError(t, err)
	require.Equal(t, [][]string{{"ok"}}, rows)
}

// lockHolder is a helper process holding the database's write lock.
type lockHolder struct {
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines *bufio.Scanner
}

// holdLock starts a process that takes BEGIN IMMEDIATE on the home's
// database and keeps it for hold; it returns once the lock is held.
func holdLock(t *testing.T, h *home, hold time.Duration) *lockHolder {
	t.Helper()
	return startLockHolder(t, h, hold)
}

// startLockHolder starts the lockdb helper: holding for hold, or until its
// stdin closes when hold is 0.
func startLockHolder(t *testing.T, h *home, hold time.Duration) *lockHolder {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=lockdb", "BGCMD_SOAK_DB="+h.dbPath())
	if hold > 0 {
		cmd.Env = append(cmd.Env, "BGCMD_SOAK_HOLD="+hold.String())
	}
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	l := &lockHolder{cmd: cmd, stdin: stdin, lines: bufio.NewScanner(out)}
	require.True(t, l.lines.Scan(), "the lock helper said nothing")
	require.Equal(t, "locked", l.lines.Text())
	return l
}

// holdLockUntilReleased starts a process holding the home's database write
// lock until release is called.
func holdLockUntilReleased(t *testing.T, h *home) *lockHolder {
	t.Helper()
	return startLockHolder(t, h, 0)
}

// release lets the helper commit and waits for it.
func (l *lockHolder) release(t *testing.T) time.Time {
	t.Helper()
	require.NoError(t, l.stdin.Close())
	return l.released(t)
}

// released waits for the helper to commit and returns when it did.
func (l *lockHolder) released(t *testing.T) time.Time {
	t.Helper()
	require.True(t, l.lines.Scan(), "the lock helper ended without releasing")
	f := strings.Fields(l.lines.Text())
	require.Len(t, f, 2)
	require.Equal(t, "released", f[0])
	ns, err := strconv.ParseInt(f[1], 10, 64)
	require.NoError(t, err)
	require.NoError(t, l.cmd.Wait())
	return time.Unix(0, ns)
}

// TestDatabaseLockedAtStart: another process holds the database's write
// lock for a few seconds; a start waits for it and succeeds.
func TestDatabaseLockedAtStart(t *testing.T) {
	h := newHome(t, "", defaultPolicy(t))
	h.mustRun(0, "list")
	l := holdLock(t, h, 3*time.Second)

	type done struct {
		res cliResult
		at  time.Time
	}
	ch := make(chan done, 1)
	exitWith := fixture(t, "exit-with.sh")
	go func() {
		res, err := h.run(context.Background(), "--json", "run", "--wait", "--", exitWith, "0")
		if err != nil {
			res.code = -1
			res.stderr = []byte(err.Error())
		}
		ch <- done{res, time.Now()}
	}()
	releasedAt := l.released(t)
	d := <-ch
	require.Equal(t, 0, d.res.code, "%s", d.res)
	require.False(t, d.at.Before(releasedAt), "the start returned before the lock was released: it cannot have written its job")
	s := statusOf(t, d.res)
	require.Equal(t, bgcmd.StateExited, s.State)
	require.Equal(t, sha([]byte("out: exiting with 0\n")), s.Stdout.SHA256)
	requireIntegrity(t, h)
}

// TestDatabaseLockedAtSettle: the command ends while another process holds
// the write lock; the supervisor waits (its exit record covers it) and
// records the true exit code once the lock is gone.
func TestDatabaseLockedAtSettle(t *testing.T) {
	h := newHome(t, "", defaultPolicy(t))
	flag := filepath.Join(h.root, "go")
	res := h.mustRun(0, "--json", "run", "--", fixture(t, "wait-for-file.sh"), flag, "7")
	id := statusOf(t, res).ID
	st := h.openRO()
	defer st.Close()

	l := holdLock(t, h, 3*time.Second)
	require.NoError(t, os.WriteFile(flag, nil, 0o600)) // the command exits 7 now
	releasedAt := l.released(t)

	res = h.mustRun(7, "--json", "wait", id, "--timeout", "1m")
	s := statusOf(t, res)
	require.Equal(t, bgcmd.StateExited, s.State)
	require.Equal(t, 7, *s.ExitCode)
	require.False(t, s.FinishedAt == nil)
	out := h.mustRun(0, "output", id, "--raw")
	require.Equal(t, "waiting\ndone\n", string(out.stdout))
	rec, err := st.Get(context.Background(), id)
	require.NoError(t, err)
	events, err := st.Events(context.Background(), id)
	require.NoError(t, err)
	require.Len(t, events, 2, "one creation and one terminal event")
	t.Logf("lock released at %s; job settled (finished_at %s, exit %d)", releasedAt.Format(time.RFC3339Nano), rec.FinishedAt.Format(time.RFC3339Nano), *rec.ExitCode)
	requireIntegrity(t, h)
}
