package jobstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

func TestEverySettledStateIsALegalTransitionFromRunning(t *testing.T) {
	t.Parallel()
	eachBackend(t, testEverySettledStateIsALegalTransitionFromRunning)
}

func testEverySettledStateIsALegalTransitionFromRunning(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, jobstore.Options{})
	for _, to := range bgcmd.SettledStates() {
		j := newJob("s")
		require.NoError(t, s.Create(ctx, j))
		code := 3
		rec, err := s.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: to, ExitCode: &code,
			Detail: map[string]any{"leftover_killed": 2}})
		require.NoError(t, err, to)
		require.Equal(t, to, rec.State)
		require.NotNil(t, rec.FinishedAt)
		require.Equal(t, 3, *rec.ExitCode)

		// A settled job never changes again, whatever is asked.
		for _, again := range bgcmd.SettledStates() {
			_, err := s.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: again})
			require.ErrorIs(t, err, bgcmd.ErrInvalidTransition, "%s -> %s", to, again)
		}
		got, err := s.Get(ctx, j.ID)
		require.NoError(t, err)
		require.Equal(t, to, got.State)
	}
}

func TestIllegalTransitionsAreNamedErrors(t *testing.T) {
	t.Parallel()
	eachBackend(t, testIllegalTransitionsAreNamedErrors)
}

func testIllegalTransitionsAreNamedErrors(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, jobstore.Options{})
	j := newJob("s")
	require.NoError(t, s.Create(ctx, j))

	_, err := s.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: bgcmd.StateRunning})
	require.ErrorIs(t, err, bgcmd.ErrInvalidTransition)
	_, err = s.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: "paused"})
	require.ErrorIs(t, err, bgcmd.ErrInvalidTransition)
	_, err = s.Settle(ctx, jobstore.SettleParams{ID: "no-such-job", To: bgcmd.StateExited})
	require.ErrorIs(t, err, bgcmd.ErrNotFound)
	_, err = s.Get(ctx, "no-such-job")
	require.ErrorIs(t, err, bgcmd.ErrNotFound)

	_, err = s.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: bgcmd.StateKilled})
	require.NoError(t, err)
	err = s.MarkStarted(ctx, jobstore.StartedParams{ID: j.ID, PID: 1, PGID: 1, StartedAt: time.Now()})
	require.ErrorIs(t, err, bgcmd.ErrInvalidTransition)
	err = s.Claim(ctx, jobstore.ClaimParams{ID: j.ID, SupervisorPID: 1})
	require.ErrorIs(t, err, bgcmd.ErrInvalidTransition)
	err = s.MarkStarted(ctx, jobstore.StartedParams{ID: "no-such-job", StartedAt: time.Now()})
	require.ErrorIs(t, err, bgcmd.ErrNotFound)

	// A kill request on a settled job returns it unchanged.
	rec, err := s.RequestKill(ctx, j.ID, "SIGTERM")
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateKilled, rec.State)
	require.Empty(t, rec.KillSignal)
}

func TestEventsRecordEveryTransitionInOrderWithArtifactsInTheSameTransaction(t *testing.T) {
	t.Parallel()
	eachBackend(t, testEventsRecordEveryTransitionInOrderWithArtifactsInTheSameTransaction)
}

func testEventsRecordEveryTransitionInOrderWithArtifactsInTheSameTransaction(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 1, 2, 3, 4, 5, 6, time.UTC)
	s := openTest(t, jobstore.Options{Now: func() time.Time { return now }})
	j := newJob("s", "/usr/bin/make", "test")
	j.EnvReplaced, j.EnvNames = true, []string{"HOME", "PATH"}
	j.Labels = map[string]string{"pr": "42"}
	require.NoError(t, s.Create(ctx, j))
	require.NoError(t, s.MarkStarted(ctx, jobstore.StartedParams{ID: j.ID, PID: 100, PGID: 100, PIDStart: 7, StartedAt: now}))
	rec, err := s.RequestKill(ctx, j.ID, "SIGINT")
	require.NoError(t, err)
	require.Equal(t, "SIGINT", rec.KillSignal)
	rec, err = s.RequestKill(ctx, j.ID, "SIGKILL")
	require.NoError(t, err)
	require.Equal(t, "SIGKILL", rec.KillSignal, "a later kill request escalates")
	require.NotNil(t, rec.KillRequestedAt)

	now = now.Add(1500 * time.Millisecond)
	_, err = s.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: bgcmd.StateKilled, Signal: "SIGKILL",
		Artifacts: []bgcmd.Artifact{
			{Stream: bgcmd.Stdout, SHA256: "aa", Bytes: 10, Chars: 10, Lines: 1},
			{Stream: bgcmd.Stderr, SHA256: "bb", Bytes: 5, Chars: 4, Lines: 2, Capped: true},
		}})
	require.NoError(t, err)

	events, err := s.Events(ctx, j.ID)
	require.NoError(t, err)
	require.Len(t, events, 2)
	require.Equal(t, bgcmd.State(""), events[0].From)
	require.Equal(t, bgcmd.StateRunning, events[0].To)
	require.Equal(t, bgcmd.StateRunning, events[1].From)
	require.Equal(t, bgcmd.StateKilled, events[1].To)
	require.Less(t, events[0].Seq, events[1].Seq)
	require.Equal(t, now, events[1].At)

	arts, err := s.Artifacts(ctx, j.ID)
	require.NoError(t, err)
	require.Len(t, arts, 2)
	require.Equal(t, bgcmd.Stdout, arts[0].Stream)
	require.Equal(t, int64(10), arts[0].Bytes)
	require.True(t, arts[1].Capped)

	got, err := s.Get(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, []string{"/usr/bin/make", "test"}, got.Argv)
	require.Equal(t, []string{"HOME", "PATH"}, got.EnvNames)
	require.Equal(t, map[string]string{"pr": "42"}, got.Labels)
	require.Equal(t, 100, got.PID)
	require.Equal(t, int64(7), got.PIDStart)
	require.Equal(t, 1500*time.Millisecond, got.Duration(now))
}

func TestAFailedSettleWritesNothing(t *testing.T) {
	t.Parallel()
	eachBackend(t, testAFailedSettleWritesNothing)
}

func testAFailedSettleWritesNothing(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, jobstore.Options{})
	j := newJob("s")
	require.NoError(t, s.Create(ctx, j))
	// Two artifacts for one stream break the UNIQUE constraint: the whole
	// transition must roll back, state included.
	_, err := s.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: bgcmd.StateExited,
		Artifacts: []bgcmd.Artifact{{Stream: bgcmd.Stdout, SHA256: "a"}, {Stream: bgcmd.Stdout, SHA256: "b"}}})
	require.Error(t, err)
	got, err := s.Get(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateRunning, got.State)
	events, err := s.Events(ctx, j.ID)
	require.NoError(t, err)
	require.Len(t, events, 1)
}

func TestSettleCanRequireTheSupervisorItSaw(t *testing.T) {
	t.Parallel()
	eachBackend(t, testSettleCanRequireTheSupervisorItSaw)
}

func testSettleCanRequireTheSupervisorItSaw(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, jobstore.Options{})
	j := newJob("s")
	j.SupervisorPID = 10
	require.NoError(t, s.Create(ctx, j))
	require.NoError(t, s.Claim(ctx, jobstore.ClaimParams{ID: j.ID, SupervisorPID: 20}))
	_, err := s.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: bgcmd.StateOrphaned, ExpectSupervisorPID: 10})
	require.ErrorIs(t, err, bgcmd.ErrInvalidTransition)
	got, err := s.Get(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateRunning, got.State)
	_, err = s.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: bgcmd.StateOrphaned, ExpectSupervisorPID: 20})
	require.NoError(t, err)
}

func TestClaimCanRequireTheSupervisorItTakesOver(t *testing.T) {
	t.Parallel()
	eachBackend(t, testClaimCanRequireTheSupervisorItTakesOver)
}

func testClaimCanRequireTheSupervisorItTakesOver(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, jobstore.Options{})
	j := newJob("s")
	j.SupervisorPID, j.SupervisorStart = 10, 100
	require.NoError(t, s.Create(ctx, j))
	// A reconciler takes the job over from the host it saw...
	require.NoError(t, s.Claim(ctx, jobstore.ClaimParams{ID: j.ID, SupervisorPID: 30, SupervisorStart: 300, FromPID: 10, FromStart: 100}))
	// ...so the late supervisor, claiming from that host, loses.
	err := s.Claim(ctx, jobstore.ClaimParams{ID: j.ID, SupervisorPID: 20, SupervisorStart: 200, FromPID: 10, FromStart: 100})
	require.ErrorIs(t, err, bgcmd.ErrInvalidTransition)
	require.ErrorContains(t, err, "another supervisor")
	got, err := s.Get(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, 30, got.SupervisorPID)
}
