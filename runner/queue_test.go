package runner_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/policy"
	"github.com/bgcmd/bgcmd/runner"
)

// maxConcurrent replays the store's job_events in seq order and returns the
// largest number of the given jobs running at once, and how often each
// entered running.
func maxConcurrent(t testing.TB, st *jobstore.Store, ids []string) (int, map[string]int) {
	t.Helper()
	evs, err := st.EventsAfter(context.Background(), jobstore.EventsParams{JobIDs: ids, Limit: jobstore.MaxEventsLimit})
	require.NoError(t, err)
	running, peak, entered := 0, 0, map[string]int{}
	for _, e := range evs {
		if e.To == bgcmd.StateRunning {
			running++
			entered[e.JobID]++
		}
		if e.From == bgcmd.StateRunning {
			running--
		}
		peak = max(peak, running)
	}
	return peak, entered
}

func TestQueueMaxRunningNeverOverlaps(t *testing.T) {
	for _, detached := range []bool{false, true} {
		t.Run(fmt.Sprintf("detached=%v", detached), func(t *testing.T) {
			e := newEnv(t, detached)
			e.policy.MaxRunning = 1
			gate := filepath.Join(e.root, "go")
			var ids []string
			for range 3 {
				j := e.start([]string{fixture(t, "wait-for-file.sh"), gate, "0"}, runner.StartOptions{})
				ids = append(ids, j.ID)
			}
			c, err := e.store.Counters(context.Background(), "default")
			require.NoError(t, err)
			require.Equal(t, 1, c.Running)
			require.Equal(t, 2, c.Queued)
			require.NoError(t, os.WriteFile(gate, nil, 0o600))
			for _, id := range ids {
				s := e.await(id)
				require.Equal(t, bgcmd.StateExited, s.State, s.Error)
				require.Equal(t, 0, *s.ExitCode)
			}
			peak, entered := maxConcurrent(t, e.store, ids)
			require.Equal(t, 1, peak)
			for _, id := range ids {
				require.Equal(t, 1, entered[id], "job %s started once", id)
			}
		})
	}
}

func TestQueueDependencyChainAndFailure(t *testing.T) {
	e := newEnv(t, false)
	a := e.start([]string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{})
	b := e.start([]string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{After: []string{a.ID}})
	c := e.start([]string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{After: []string{b.ID}})
	for _, id := range []string{a.ID, b.ID, c.ID} {
		require.Equal(t, bgcmd.StateExited, e.await(id).State)
	}
	ra, _ := e.store.Get(context.Background(), a.ID)
	rb, _ := e.store.Get(context.Background(), b.ID)
	rc, _ := e.store.Get(context.Background(), c.ID)
	require.False(t, rb.StartedAt.Before(*ra.FinishedAt))
	require.False(t, rc.StartedAt.Before(*rb.FinishedAt))

	gate := filepath.Join(e.root, "fail")
	f := e.start([]string{fixture(t, "wait-for-file.sh"), gate, "3"}, runner.StartOptions{})
	g := e.start([]string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{After: []string{f.ID}})
	h := e.start([]string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{After: []string{g.ID}})
	require.Equal(t, bgcmd.StateQueued, g.State)
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	require.Equal(t, bgcmd.StateExited, e.await(f.ID).State)
	sg, sh := e.await(g.ID), e.await(h.ID)
	require.Equal(t, bgcmd.StateDependencyFailed, sg.State)
	require.Contains(t, sg.Error, f.ID)
	require.Contains(t, sg.Error, "exited 3")
	require.Equal(t, bgcmd.StateDependencyFailed, sh.State)
	require.Contains(t, sh.Error, g.ID)
	rg, _ := e.store.Get(context.Background(), g.ID)
	require.Nil(t, rg.StartedAt)
}

func TestQueueRefusesBadDependenciesAndGroups(t *testing.T) {
	e := newEnv(t, false)
	_, err := e.r.Start(context.Background(), []string{fixture(t, "exit-with.sh"), "0"},
		runner.StartOptions{After: []string{jobstore.NewID()}})
	var ref *policy.Refusal
	require.True(t, errors.As(err, &ref), "%v", err)
	require.Equal(t, policy.CodeBadDependency, ref.Code)
	other := e.start([]string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{Session: "other"})
	_, err = e.r.Start(context.Background(), []string{fixture(t, "exit-with.sh"), "0"},
		runner.StartOptions{After: []string{other.ID}})
	require.True(t, errors.As(err, &ref), "%v", err)
	require.Contains(t, ref.Message, "no such job in session default")
	_, err = e.r.Start(context.Background(), []string{fixture(t, "exit-with.sh"), "0"},
		runner.StartOptions{Group: "nope"})
	require.True(t, errors.As(err, &ref), "%v", err)
	require.Equal(t, policy.CodeUnknownGroup, ref.Code)
}

func TestQueueKillQueuedJobNeverStarts(t *testing.T) {
	for _, detached := range []bool{false, true} {
		t.Run(fmt.Sprintf("detached=%v", detached), func(t *testing.T) {
			e := newEnv(t, detached)
			e.policy.Groups = map[string]policy.Group{"one": {MaxRunning: 1}}
			gate := filepath.Join(e.root, "go")
			a := e.start([]string{fixture(t, "wait-for-file.sh"), gate, "0"}, runner.StartOptions{Group: "one"})
			b := e.start([]string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{Group: "one"})
			require.Equal(t, bgcmd.StateQueued, b.State)
			s, err := e.r.Kill(context.Background(), b.ID, 0)
			require.NoError(t, err)
			require.Equal(t, bgcmd.StateKilled, s.State)
			require.Nil(t, s.StartedAt)
			require.NoError(t, os.WriteFile(gate, nil, 0o600))
			require.Equal(t, bgcmd.StateExited, e.await(a.ID).State)
			_, entered := maxConcurrent(t, e.store, []string{b.ID})
			require.Zero(t, entered[b.ID])
			_, err = os.Stat(filepath.Join(e.home, "jobs", b.ID))
			require.True(t, errors.Is(err, os.ErrNotExist))
		})
	}
}

func TestQueueTimeoutCountsFromTheStartNotTheEnqueue(t *testing.T) {
	e := newEnv(t, false)
	e.policy.MaxRunning = 1
	gate := filepath.Join(e.root, "go")
	a := e.start([]string{fixture(t, "wait-for-file.sh"), gate, "0"}, runner.StartOptions{})
	// The timeout leaves room for a slow start (the in-process reaper is
	// this test binary, slow to start under the race detector).
	b := e.start([]string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{Timeout: 5 * time.Second})
	require.Equal(t, bgcmd.StateQueued, b.State)
	// Let b wait in the queue longer than its timeout: the wait is the
	// subject of the test, so it is bounded by the clock, not a sleep.
	for deadline := b.CreatedAt.Add(5500 * time.Millisecond); time.Now().Before(deadline); {
		s, err := e.r.Await(context.Background(), a.ID, time.Until(deadline))
		require.NoError(t, err)
		require.False(t, s.Settled())
	}
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	s := e.await(b.ID)
	require.Equal(t, bgcmd.StateExited, s.State, "%s (created %s, started %s, finished %s)", s.Error, s.CreatedAt, s.StartedAt, s.FinishedAt)
	require.Equal(t, 0, *s.ExitCode)
	require.True(t, s.StartedAt.Sub(s.CreatedAt) > 5*time.Second, "it was queued past its timeout")
}
