package runner_test

import (
	"context"
	"database/sql"
	"encoding/binary"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/hostid"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/internal/testkit"
	"github.com/bgcmd/bgcmd/policy"
	"github.com/bgcmd/bgcmd/runner"
)

// TestASupervisorWritesTheRowOfAHostThatNeverOpensItsStore: with
// SupervisorWrites and a Deferred store (a `bgcmd run`), Start returns the
// job running with its child's pid, its row written by the supervisor, and
// the host never connects to its store. The job settles as any other. A
// start that fails is on record as start_failed, read back; a policy
// refusal is recorded through the store, which opens then.
func TestASupervisorWritesTheRowOfAHostThatNeverOpensItsStore(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	home, root, path := storeHome(t)
	reader, err := jobstore.Open(ctx, jobstore.Options{Path: path})
	require.NoError(t, err)
	defer reader.Close()
	require.True(t, jobstore.SchemaCurrent(path), "a store just migrated says so in its header")

	notExec := filepath.Join(root, "not-executable")
	require.NoError(t, os.WriteFile(notExec, []byte("#!/bin/sh\n"), 0o644))
	exitWith := fixture(t, "exit-with.sh")
	pol := &policy.Policy{CwdRoot: root, AllowedExecutables: []string{exitWith, notExec},
		KillGrace: 200 * time.Millisecond}
	newHost := func() (*jobstore.Store, *runner.Runner) {
		st, err := jobstore.Open(ctx, jobstore.Options{Path: path, Deferred: true})
		require.NoError(t, err)
		t.Cleanup(func() { st.Close() })
		r, err := runner.New(ctx, runner.Options{Store: st, Home: home, Policy: pol, Detached: true,
			Binary: os.Args[0], SkipReconcile: true, Transient: true, SupervisorWrites: true})
		require.NoError(t, err)
		t.Cleanup(func() { r.Close(context.Background()) })
		return st, r
	}
	settled := func(id string) *jobstore.Record {
		var rec *jobstore.Record
		require.Eventually(t, func() bool {
			rec, err = reader.Get(ctx, id)
			return err == nil && rec.State.Settled()
		}, time.Minute, 10*time.Millisecond, "job %s settles", id)
		return rec
	}

	st, r := newHost()
	j, err := r.Start(ctx, []string{exitWith, "3"}, runner.StartOptions{Cwd: root})
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateRunning, j.State)
	require.NotZero(t, j.PID)
	require.NotNil(t, j.StartedAt)
	require.False(t, st.Connected(), "the host started the job without connecting to its store")
	row, err := reader.Get(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, []any{j.Host, j.HostID, j.Session, j.Argv, j.Exe, j.CreatedAt, j.SupervisorPID, j.PID, *j.StartedAt},
		[]any{row.Host, row.HostID, row.Session, row.Argv, row.Exe, row.CreatedAt, row.SupervisorPID, row.PID, *row.StartedAt},
		"the job Start returns reads as its row")
	rec := settled(j.ID)
	require.Equal(t, bgcmd.StateExited, rec.State)
	require.Equal(t, 3, *rec.ExitCode)
	require.Equal(t, j.PID, rec.PID, "the row has the child the host was told of")
	require.Equal(t, j.SupervisorPID, rec.SupervisorPID)
	events, err := reader.Events(ctx, j.ID)
	require.NoError(t, err)
	require.Len(t, events, 2, "the create's event and the settle's")

	st, r = newHost()
	j, err = r.Start(ctx, []string{notExec}, runner.StartOptions{Cwd: root})
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateStartFailed, j.State)
	require.Contains(t, j.Error, "not executable")
	rec = settled(j.ID)
	require.Equal(t, bgcmd.StateStartFailed, rec.State)
	require.True(t, st.Connected(), "a start that failed is read back")

	st, r = newHost()
	_, err = r.Start(ctx, []string{"/bin/rm", "-rf", root}, runner.StartOptions{Cwd: root})
	_, refused := policy.IsRefusal(err)
	require.True(t, refused, "%v", err)
	refusals, err := reader.Refusals(ctx, 10)
	require.NoError(t, err)
	require.Len(t, refusals, 1, "the refusal is recorded through the host's store, opened then")
}

// TestASupervisorThatCannotReadItsStoreStopsTheJobAndKeepsItsRecord: a
// file whose header says it is at this build's schema (SchemaCurrent) but
// whose schema is not bgcmd's. The supervisor announces the job's create
// and reports it running before it opens the store, as its host would,
// without migrating it; it then cannot write the row. It stops the child
// (nothing of the attempt is left running), says why in its log, naming
// the store and what is wrong with it, and leaves the announced record,
// which a reader of the store still finds: the job is not lost, and the
// reader's error says what stands in the way.
func TestASupervisorThatCannotReadItsStoreStopsTheJobAndKeepsItsRecord(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	home, root, path := storeHome(t)
	migrated, err := jobstore.Open(ctx, jobstore.Options{Path: filepath.Join(home, "migrated.db")})
	require.NoError(t, err)
	require.NoError(t, migrated.Close())
	header, err := os.ReadFile(filepath.Join(home, "migrated.db"))
	require.NoError(t, err)
	version := binary.BigEndian.Uint32(header[60:64]) // user_version
	foreign, err := sql.Open("sqlite", path)
	require.NoError(t, err)
	for _, q := range []string{"PRAGMA journal_mode = WAL", "CREATE TABLE notes (body TEXT)",
		fmt.Sprintf("PRAGMA user_version = %d", version), "PRAGMA wal_checkpoint(TRUNCATE)"} {
		_, err := foreign.Exec(q)
		require.NoError(t, err, q)
	}
	require.NoError(t, foreign.Close())
	require.True(t, jobstore.SchemaCurrent(path), "the header names this build's schema")

	waiter := fixture(t, "wait-for-file.sh")
	never := filepath.Join(root, "never")
	pol := &policy.Policy{CwdRoot: root, AllowedExecutables: []string{waiter}, KillGrace: 200 * time.Millisecond}
	id, err := hostid.Load(home)
	require.NoError(t, err)
	opts := jobstore.Options{Path: path, Host: id.Name, HostID: id.ID, Deferred: true}
	// As `bgcmd run` does: the supervisor is started, and told the store,
	// before the host's store is made.
	pre, err := runner.Prestart(os.Args[0], opts)
	require.NoError(t, err)
	st, err := jobstore.Open(ctx, opts)
	require.NoError(t, err)
	defer st.Close()
	r, err := runner.New(ctx, runner.Options{Store: st, Home: home, Policy: pol, Detached: true,
		Binary: os.Args[0], SkipReconcile: true, Transient: true, Prestarted: pre, SupervisorWrites: true})
	require.NoError(t, err)
	defer r.Close(context.Background())
	j, err := r.Start(ctx, []string{waiter, never}, runner.StartOptions{Cwd: root})
	require.NoError(t, err, "announced: reported running")
	require.Equal(t, bgcmd.StateRunning, j.State)
	require.Eventually(t, func() bool { return len(processesNaming(never)) == 0 }, time.Minute, 10*time.Millisecond,
		"no process of the attempt is left running")
	require.Eventually(t, func() bool { return !processAlive(j.SupervisorPID) }, time.Minute, 10*time.Millisecond,
		"the supervisor ends")
	log, err := os.ReadFile(filepath.Join(home, "jobs", j.ID, "supervisor.log"))
	require.NoError(t, err)
	require.Contains(t, string(log), path, "its log names the store")
	require.Contains(t, string(log), "no such table", "and says what is wrong with it")
	require.FileExists(t, filepath.Join(jobstore.AnnounceDir(path), j.ID), "the record of the job is kept")
	_, err = st.Get(ctx, j.ID)
	require.ErrorContains(t, err, "no such table", "a reader is told what stands between it and the job")
}

// processesNaming returns the pids of the processes an argument of whose
// command line, after the first, begins with arg.
func processesNaming(arg string) []int {
	return processesWhose("cmdline", []byte("\x00"+arg))
}

// storeHome returns a home directory, a sandbox root (symlinks resolved)
// and the path of a store in the home, not made yet.
func storeHome(t *testing.T) (home, root, path string) {
	home = t.TempDir()
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	return home, root, filepath.Join(home, "bgcmd.db")
}

// TestASupervisorEndedBeforeItWritesAnAnnouncedRowLosesNothing: a `bgcmd
// run`'s supervisor reports its job running once the create is announced,
// and writes the row after. Held in that window (the store busy), it is
// killed, or stopped (the job itself can stop it: same user). Reconcile
// then writes the row from the record, ending a stopped supervisor first,
// and settles the job as any whose supervisor died: on record, orphaned,
// with nothing of it left running.
func TestASupervisorEndedBeforeItWritesAnAnnouncedRowLosesNothing(t *testing.T) {
	t.Parallel()
	for _, sig := range []syscall.Signal{syscall.SIGKILL, syscall.SIGSTOP} {
		t.Run(sig.String(), func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			home, root, path := storeHome(t)
			testkit.Cleanup(t, home)
			reader, err := jobstore.Open(ctx, jobstore.Options{Path: path})
			require.NoError(t, err)
			defer reader.Close()
			waiter := fixture(t, "wait-for-file.sh")
			never := filepath.Join(root, "never")
			pol := &policy.Policy{CwdRoot: root, AllowedExecutables: []string{waiter}, KillGrace: 200 * time.Millisecond}
			st, err := jobstore.Open(ctx, jobstore.Options{Path: path, Deferred: true})
			require.NoError(t, err)
			defer st.Close()
			r, err := runner.New(ctx, runner.Options{Store: st, Home: home, Policy: pol, Detached: true,
				Binary: os.Args[0], SkipReconcile: true, Transient: true, SupervisorWrites: true})
			require.NoError(t, err)
			defer r.Close(context.Background())

			// The store's write lock, held: the row waits.
			blocker, err := sql.Open("sqlite", "file:"+path+"?_pragma=busy_timeout(10000)")
			require.NoError(t, err)
			defer blocker.Close()
			conn, err := blocker.Conn(ctx)
			require.NoError(t, err)
			defer conn.Close()
			_, err = conn.ExecContext(ctx, "BEGIN IMMEDIATE")
			require.NoError(t, err)

			j, err := r.Start(ctx, []string{waiter, never}, runner.StartOptions{Cwd: root})
			require.NoError(t, err)
			require.Equal(t, bgcmd.StateRunning, j.State, "reported running once announced")
			t.Cleanup(func() { // should the test fail before reconcile ends them
				syscall.Kill(-j.PGID, syscall.SIGKILL)
				syscall.Kill(j.SupervisorPID, syscall.SIGKILL)
			})
			require.FileExists(t, filepath.Join(jobstore.AnnounceDir(path), j.ID))
			require.NoError(t, syscall.Kill(j.SupervisorPID, sig))
			if sig == syscall.SIGSTOP {
				require.Eventually(t, func() bool { return procState(j.SupervisorPID) == 'T' }, time.Minute, 5*time.Millisecond)
			}
			_, err = conn.ExecContext(ctx, "ROLLBACK")
			require.NoError(t, err)

			rep, err := r.Reconcile(ctx)
			require.NoError(t, err)
			require.Equal(t, 1, rep.Orphaned, "%+v", rep)
			rec, err := reader.Get(ctx, j.ID)
			require.NoError(t, err, "the job is on record")
			require.Equal(t, bgcmd.StateOrphaned, rec.State)
			require.Equal(t, []any{j.PID, j.PIDStart, j.Argv, j.CreatedAt, *j.StartedAt},
				[]any{rec.PID, rec.PIDStart, rec.Argv, rec.CreatedAt, *rec.StartedAt}, "as its supervisor announced it")
			require.Eventually(t, func() bool { return len(processesNaming(never)) == 0 && !processAlive(j.SupervisorPID) },
				time.Minute, 10*time.Millisecond, "nothing of the job is left running, nor its supervisor")
			require.NoFileExists(t, filepath.Join(jobstore.AnnounceDir(path), j.ID))
		})
	}
}

// TestGCLeavesAnAnnouncedJobsDirectory: a job reported running before its
// row is written has a directory under jobs/ that no row names yet. gc,
// even with no minimum age, leaves it to the job's supervisor, and takes a
// directory no row and no record names.
func TestGCLeavesAnAnnouncedJobsDirectory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := newEnv(t, true)
	now := time.Now().UTC()
	j := &bgcmd.Job{ID: jobstore.NewID(), Argv: []string{"/bin/true"}, Exe: "/bin/true", StartedAt: &now}
	a, err := jobstore.Announce(e.store.Path(), j)
	require.NoError(t, err)
	defer a.Done()
	announced := filepath.Join(e.home, "jobs", j.ID)
	stray := filepath.Join(e.home, "jobs", jobstore.NewID())
	for _, d := range []string{announced, stray} {
		require.NoError(t, os.MkdirAll(d, 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(d, "stdout.log"), []byte("out"), 0o600))
	}
	rep, err := e.r.GC(ctx, runner.GCOptions{})
	require.NoError(t, err)
	var removed []string
	for _, it := range rep.JobDirs {
		removed = append(removed, it.Path)
	}
	require.Equal(t, []string{stray}, removed)
	require.DirExists(t, announced)
	require.NoDirExists(t, stray)
}
