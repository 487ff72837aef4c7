package jobstore_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// startedFacts is a child's start as a supervisor reports it.
func startedFacts(id string, pid int) jobstore.StartedParams {
	return jobstore.StartedParams{ID: id, PID: pid, PGID: pid, PIDStart: 4242,
		StartedAt: time.Date(2026, 3, 4, 5, 6, 7, 890_000_000, time.UTC)}
}

// A create begun ahead and committed with the child's start leaves the job
// as Create leaves one created with that start: the same row, one creation
// event, the chain intact, the session counted once.
func TestPendingCreateCommitsTheRowCreateWouldWrite(t *testing.T) {
	t.Parallel()
	eachBackend(t, testPendingCreateCommitsTheRowCreateWouldWrite)
}

func testPendingCreateCommitsTheRowCreateWouldWrite(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, jobstore.Options{})
	ahead := newJob("s", "/usr/bin/make", "-j4")
	ahead.Labels = map[string]string{"k": "v"}
	pending, err := s.BeginCreate(ctx, ahead)
	require.NoError(t, err)
	require.NotEmpty(t, ahead.ID, "BeginCreate fills the job as Create does")
	require.Equal(t, bgcmd.StateRunning, ahead.State)
	st := startedFacts(ahead.ID, 777)
	require.NoError(t, pending.Commit(ctx, st))
	require.Equal(t, 777, ahead.PID, "the job given to BeginCreate holds its child's start")
	require.NotNil(t, ahead.StartedAt)

	whole := newJob("s", "/usr/bin/make", "-j4")
	whole.Labels = map[string]string{"k": "v"}
	whole.PID, whole.PGID, whole.PIDStart, whole.StartedAt = st.PID, st.PGID, st.PIDStart, &st.StartedAt
	whole.CreatedAt = ahead.CreatedAt
	require.NoError(t, s.Create(ctx, whole))

	got, err := s.Get(ctx, ahead.ID)
	require.NoError(t, err)
	want, err := s.Get(ctx, whole.ID)
	require.NoError(t, err)
	want.ID = got.ID
	require.Equal(t, want, got, "the same row as Create writes with the child's start")
	require.Equal(t, 777, got.PID)
	require.Equal(t, 777, got.PGID)
	require.EqualValues(t, 4242, got.PIDStart)
	require.True(t, st.StartedAt.Equal(*got.StartedAt))

	evs, err := s.Events(ctx, ahead.ID)
	require.NoError(t, err)
	require.Len(t, evs, 1, "one creation event")
	require.Equal(t, bgcmd.StateRunning, evs[0].To)
	require.Equal(t, bgcmd.State(""), evs[0].From)
	rep, err := s.VerifyChain(ctx, jobstore.VerifyChainParams{})
	require.NoError(t, err)
	require.Nil(t, rep.Problem, "the chain links the event written ahead")
	require.EqualValues(t, 2, rep.Events)
	c, err := s.Counters(ctx, "s")
	require.NoError(t, err)
	require.Equal(t, 2, c.Running, "each job counted once")
}

// Until Commit nothing of the job can be read, by this store or another;
// Abort leaves nothing, and Commit after it fails saying so.
func TestPendingCreateIsInvisibleUntilCommitAndAbortLeavesNothing(t *testing.T) {
	t.Parallel()
	eachBackend(t, testPendingCreateIsInvisibleUntilCommitAndAbortLeavesNothing)
}

func testPendingCreateIsInvisibleUntilCommitAndAbortLeavesNothing(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bgcmd.db")
	s := openTest(t, jobstore.Options{Path: path})
	other := openTest(t, jobstore.Options{Path: path, ReadOnly: true})

	j := newJob("s")
	pending, err := s.BeginCreate(ctx, j)
	require.NoError(t, err)
	for _, st := range []*jobstore.Store{s, other} {
		_, err = st.Get(ctx, j.ID)
		require.ErrorIs(t, err, bgcmd.ErrNotFound, "not on record before Commit")
	}
	pending.Abort()
	pending.Abort() // again: nothing more happens
	var none *jobstore.PendingCreate
	none.Abort() // none begun: nothing to drop
	require.ErrorIs(t, pending.Commit(ctx, startedFacts(j.ID, 1)), jobstore.ErrCreateDropped)
	_, err = s.Get(ctx, j.ID)
	require.ErrorIs(t, err, bgcmd.ErrNotFound, "nothing on record after Abort")
	evs, err := s.Events(ctx, j.ID)
	require.NoError(t, err)
	require.Empty(t, evs)
	c, err := s.Counters(ctx, "s")
	require.NoError(t, err)
	require.Zero(t, c.Running)

	// The write lock is free again: the next create commits at once.
	next := newJob("s")
	require.NoError(t, s.Create(ctx, next))
	rec, err := other.Get(ctx, next.ID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateRunning, rec.State)
}

// Commit checks what it is given, and an Abort after a Commit changes
// nothing.
func TestPendingCreateCommitTakesOnlyItsOwnJobsStart(t *testing.T) {
	t.Parallel()
	eachBackend(t, testPendingCreateCommitTakesOnlyItsOwnJobsStart)
}

func testPendingCreateCommitTakesOnlyItsOwnJobsStart(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, jobstore.Options{})
	j := newJob("s")
	pending, err := s.BeginCreate(ctx, j)
	require.NoError(t, err)
	err = pending.Commit(ctx, startedFacts(jobstore.NewID(), 5))
	require.Error(t, err)
	require.Contains(t, err.Error(), j.ID, "the error names the job")
	require.NoError(t, pending.Commit(ctx, startedFacts(j.ID, 5)), "still open after a refused commit")
	pending.Abort()
	rec, err := s.Get(ctx, j.ID)
	require.NoError(t, err, "an Abort after the Commit drops nothing")
	require.Equal(t, 5, rec.PID)

	started := newJob("s")
	now := time.Now()
	started.StartedAt = &now
	_, err = s.BeginCreate(ctx, started)
	require.Error(t, err, "a job whose child has started is for Create")
}

// Abort may come from another goroutine (a timer letting the write lock
// go) while Commit runs: one of them wins, and the store agrees with it.
func TestPendingCreateAbortRacingCommitHasOneOutcome(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t, jobstore.Options{})
	committed := 0
	for range 20 {
		j := newJob("s")
		pending, err := s.BeginCreate(ctx, j)
		require.NoError(t, err)
		var wg sync.WaitGroup
		wg.Add(1)
		go func() {
			defer wg.Done()
			pending.Abort()
		}()
		err = pending.Commit(ctx, startedFacts(j.ID, 9))
		wg.Wait()
		_, gerr := s.Get(ctx, j.ID)
		switch {
		case err == nil:
			committed++
			require.NoError(t, gerr, "committed: on record")
		case errors.Is(err, jobstore.ErrCreateDropped):
			require.ErrorIs(t, gerr, bgcmd.ErrNotFound, "dropped: nothing on record")
		default:
			t.Fatalf("commit: %v", err)
		}
	}
	t.Logf("%d of 20 commits came first", committed)
}
