//go:build linux

package runner_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/internal/testkit"
	"github.com/bgcmd/bgcmd/policy"
	"github.com/bgcmd/bgcmd/runner"
)

// pgHost is one host of a PostgreSQL store: its own home (so no tick file
// is shared with another host), its own host id, an in-process runner
// whose polls are an hour long, so that within a test only a NOTIFY (or a
// listener's reconnect) can wake it.
type pgHost struct {
	store *jobstore.Store
	r     *runner.Runner
	root  string
}

func newPGHost(t *testing.T, dsn string) *pgHost {
	t.Helper()
	ctx := context.Background()
	home, root := t.TempDir(), t.TempDir()
	testkit.Cleanup(t, home)
	st, err := jobstore.Open(ctx, jobstore.Options{Path: filepath.Join(home, "bgcmd.db"), DSN: dsn,
		Host: "h", HostID: uuid.NewString()})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	pol := &policy.Policy{CwdRoot: root, DefaultTimeout: 10 * time.Minute, KillGrace: 2 * time.Second,
		AllowedExecutables: []string{fixture(t, "wait-for-file.sh"), fixture(t, "exit-with.sh")}}
	r, err := runner.New(ctx, runner.Options{Store: st, Home: home, Policy: pol})
	require.NoError(t, err)
	t.Cleanup(func() { r.Close(context.Background()) })
	runner.SetPolls(r, time.Hour, time.Hour)
	return &pgHost{store: st, r: r, root: root}
}

// startWaiting starts, on h, a job that runs until the file it names
// exists, and returns the job and that file.
func (h *pgHost) startWaiting(t *testing.T) (*bgcmd.Job, string) {
	t.Helper()
	file := filepath.Join(h.root, "go-"+uuid.NewString())
	j, err := h.r.Start(context.Background(), []string{fixture(t, "wait-for-file.sh"), file}, runner.StartOptions{Cwd: h.root})
	require.NoError(t, err)
	// A failing test leaves no job running for Close to wait on.
	t.Cleanup(func() { _ = os.WriteFile(file, nil, 0o600) })
	require.Equal(t, bgcmd.StateRunning, j.State)
	return j, file
}

// TestKillFromAnotherHostArrivesByNotifyOnPostgres: host B kills host A's
// job; A's supervisor, whose row poll is an hour long and which shares no
// tick file with B, stops it at once: the request travelled by NOTIFY.
func TestKillFromAnotherHostArrivesByNotifyOnPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testkit.PostgresDB(t)
	a, b := newPGHost(t, dsn), newPGHost(t, dsn)
	j, _ := a.startWaiting(t)

	_, err := b.r.RequestKill(ctx, j.ID, syscall.SIGTERM)
	require.NoError(t, err)
	st, err := a.r.Await(ctx, j.ID, 30*time.Second)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateKilled, st.State, "the kill did not reach A's supervisor: %+v", st)
	require.Equal(t, "SIGTERM", st.Signal)
}

// TestSettleOnOneHostWakesSubscribersOnAnotherOnPostgres: a job of host A
// settles; host B's event subscription and B's AwaitAny, whose safety-net
// reads are an hour apart and which share no tick file with A, learn it at
// once: the settle travelled by NOTIFY.
func TestSettleOnOneHostWakesSubscribersOnAnotherOnPostgres(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	dsn := testkit.PostgresDB(t)
	a, b := newPGHost(t, dsn), newPGHost(t, dsn)
	j, file := a.startWaiting(t)

	events, err := b.r.Events(ctx, runner.EventFilter{JobIDs: []string{j.ID}, Settled: true, After: -1})
	require.NoError(t, err)
	anyDone := make(chan *bgcmd.Status, 1)
	anyErr := make(chan error, 1)
	go func() {
		st, err := b.r.AwaitAny(ctx, []string{j.ID}, 30*time.Second)
		anyErr <- err
		anyDone <- st
	}()

	require.NoError(t, os.WriteFile(file, nil, 0o600))
	select {
	case e := <-events:
		require.Equal(t, j.ID, e.JobID)
		require.Equal(t, bgcmd.StateExited, e.To)
	case <-time.After(30 * time.Second):
		t.Fatal("host B's event subscription did not hear of the settle on host A")
	}
	require.NoError(t, <-anyErr)
	st := <-anyDone
	require.Equal(t, bgcmd.StateExited, st.State, "AwaitAny on B returned before the settle: %+v", st)
}

// TestKillArrivesAfterTheListenerIsCutOffOnPostgres: host A's listening
// connection is terminated by the server (pg_terminate_backend); the
// listener reconnects and reads what it may have missed, so a kill request
// made by host B meanwhile still stops A's job, though A's row poll is an
// hour long.
func TestKillArrivesAfterTheListenerIsCutOffOnPostgres(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testkit.PostgresDB(t)
	a, b := newPGHost(t, dsn), newPGHost(t, dsn)
	j, _ := a.startWaiting(t)
	require.Eventually(t, func() bool { return a.store.ListenerConnects() == 1 }, 30*time.Second, 10*time.Millisecond,
		"A's supervisor listens")

	db, err := sql.Open("pgx", dsn)
	require.NoError(t, err)
	defer db.Close()
	var cut int
	require.NoError(t, db.QueryRow(`SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND application_name = $1`, jobstore.ListenerApplicationName).Scan(&cut))
	require.Equal(t, 1, cut, "one listener on the database: A's")

	_, err = b.r.RequestKill(ctx, j.ID, syscall.SIGTERM)
	require.NoError(t, err)
	st, err := a.r.Await(ctx, j.ID, 30*time.Second)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateKilled, st.State, "the kill did not reach A's supervisor: %+v", st)
	require.Eventually(t, func() bool { return a.store.ListenerConnects() >= 2 }, 30*time.Second, 10*time.Millisecond,
		"the listener reconnects")
}

// TestAStoreWithoutAPathLeavesNothingInTheWorkingDirectory is the exploit
// of a PostgreSQL store a Go host opens without Options.Path: the tick
// files and the wake folder live beside the database's path, and with none
// they were made relative to the process's working directory (wherever the
// host ran, "/" for a root supervisor). Such a store has none of them: its
// kill requests and settles travel by NOTIFY, and its keepers poll.
func TestAStoreWithoutAPathLeavesNothingInTheWorkingDirectory(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testkit.PostgresDB(t)
	home, root := t.TempDir(), t.TempDir()
	testkit.Cleanup(t, home)
	st, err := jobstore.Open(ctx, jobstore.Options{DSN: dsn, Host: "h", HostID: uuid.NewString()})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	require.Empty(t, st.Path())
	pol := &policy.Policy{CwdRoot: root, DefaultTimeout: 10 * time.Minute, KillGrace: 2 * time.Second,
		AllowedExecutables: []string{fixture(t, "wait-for-file.sh")}}
	r, err := runner.New(ctx, runner.Options{Store: st, Home: home, Policy: pol})
	require.NoError(t, err)
	t.Cleanup(func() { r.Close(context.Background()) })
	other, err := runner.New(ctx, runner.Options{Store: st, Home: home, Policy: pol})
	require.NoError(t, err)
	t.Cleanup(func() { other.Close(context.Background()) })

	h := &pgHost{store: st, r: r, root: root}
	j, _ := h.startWaiting(t)
	_, err = other.RequestKill(ctx, j.ID, syscall.SIGTERM)
	require.NoError(t, err)
	s, err := r.Await(ctx, j.ID, pollDeadline)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateKilled, s.State, "%+v", s)

	cwd, err := os.Getwd()
	require.NoError(t, err)
	for _, name := range []string{"wake", runner.EventsTickName, "kill.tick"} {
		require.NoFileExists(t, filepath.Join(cwd, name), "made in the working directory")
		require.NoDirExists(t, filepath.Join(cwd, name), "made in the working directory")
	}
}
