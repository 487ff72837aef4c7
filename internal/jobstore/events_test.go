package jobstore_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

func TestEventsAfterFiltersAndPages(t *testing.T) {
	t.Parallel()
	eachBackend(t, testEventsAfterFiltersAndPages)
}

func testEventsAfterFiltersAndPages(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, jobstore.Options{})
	a, b := newJob("a"), newJob("b")
	require.NoError(t, s.Create(ctx, a))
	require.NoError(t, s.Create(ctx, b))
	code := 3
	_, err := s.Settle(ctx, jobstore.SettleParams{ID: a.ID, To: bgcmd.StateExited, ExitCode: &code})
	require.NoError(t, err)

	all, err := s.EventsAfter(ctx, jobstore.EventsParams{})
	require.NoError(t, err)
	require.Len(t, all, 3)
	require.Less(t, all[0].Seq, all[1].Seq)
	require.Nil(t, all[0].ExitCode, "a creation carries no exit code")
	require.Equal(t, 3, *all[2].ExitCode)

	got, err := s.EventsAfter(ctx, jobstore.EventsParams{Session: "a"})
	require.NoError(t, err)
	require.Len(t, got, 2)
	got, err = s.EventsAfter(ctx, jobstore.EventsParams{Settled: true})
	require.NoError(t, err)
	require.Len(t, got, 1)
	require.Equal(t, a.ID, got[0].JobID)
	require.Equal(t, "a", got[0].Session)
	got, err = s.EventsAfter(ctx, jobstore.EventsParams{JobIDs: []string{b.ID}})
	require.NoError(t, err)
	require.Len(t, got, 1)
	got, err = s.EventsAfter(ctx, jobstore.EventsParams{After: all[0].Seq, Limit: 1})
	require.NoError(t, err)
	require.Equal(t, []int64{all[1].Seq}, []int64{got[0].Seq})
	latest, err := s.LatestEventSeq(ctx)
	require.NoError(t, err)
	require.Equal(t, all[2].Seq, latest)
	_, err = s.EventsAfter(ctx, jobstore.EventsParams{Limit: jobstore.MaxEventsLimit + 1})
	require.ErrorContains(t, err, "out of range")
}

func TestSettleHookIsClaimedOnceAndOnlyOnceSettled(t *testing.T) {
	t.Parallel()
	eachBackend(t, testSettleHookIsClaimedOnceAndOnlyOnceSettled)
}

func testSettleHookIsClaimedOnceAndOnlyOnceSettled(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, jobstore.Options{})
	j := newJob("a")
	require.NoError(t, s.Create(ctx, j))
	require.NoError(t, s.AddSettleHook(ctx, jobstore.SettleHook{JobID: j.ID, Argv: []string{"/bin/true"}, Timeout: time.Second}))
	_, ok, err := s.ClaimSettleHook(ctx, j.ID, "x:1")
	require.NoError(t, err)
	require.False(t, ok, "a running job's hook is not claimed")
	_, err = s.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: bgcmd.StateKilled})
	require.NoError(t, err)
	unclaimed, err := s.UnclaimedSettleHooks(ctx)
	require.NoError(t, err)
	require.Equal(t, []string{j.ID}, unclaimed)

	var wins sync.WaitGroup
	var mu sync.Mutex
	claimed := 0
	for range 8 {
		wins.Add(1)
		go func() {
			defer wins.Done()
			_, ok, err := s.ClaimSettleHook(ctx, j.ID, "x:2")
			if err == nil && ok {
				mu.Lock()
				claimed++
				mu.Unlock()
			}
		}()
	}
	wins.Wait()
	require.Equal(t, 1, claimed)
	unclaimed, err = s.UnclaimedSettleHooks(ctx)
	require.NoError(t, err)
	require.Empty(t, unclaimed)
	code := 2
	require.NoError(t, s.FinishSettleHook(ctx, j.ID, jobstore.HookFailed, &code, "boom"))
	h, err := s.SettleHookRun(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, jobstore.HookFailed, h.Outcome)
	require.Equal(t, 2, *h.ExitCode)
	require.Equal(t, "x:2", h.ClaimedBy)
	rec, err := s.Get(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, bgcmd.StateKilled, rec.State)
}
