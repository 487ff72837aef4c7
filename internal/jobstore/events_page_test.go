package jobstore_test

import (
	"context"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// A filtered feed resumes past the events that did not match: a session's
// feed polled while other sessions' jobs come and go does not read them
// again at the next poll, and still gets every event of its own.
func TestEventsPageResumesPastOtherSessions(t *testing.T) {
	t.Parallel()
	eachBackend(t, testEventsPageResumesPastOtherSessions)
}

func testEventsPageResumesPastOtherSessions(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, jobstore.Options{})
	a1 := newJob("a")
	require.NoError(t, s.Create(ctx, a1))
	for range 5 {
		require.NoError(t, s.Create(ctx, newJob("b")))
	}
	newest, err := s.LatestEventSeq(ctx)
	require.NoError(t, err)

	p := jobstore.EventsParams{Session: "a", Limit: 10}
	evs, next, err := s.EventsPage(ctx, p)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, a1.ID, evs[0].JobID)
	require.Equal(t, newest, next, "a short page resumes after every event it looked at")

	p.After = next
	evs, next, err = s.EventsPage(ctx, p)
	require.NoError(t, err)
	require.Empty(t, evs)
	require.Equal(t, newest, next, "nothing new: the resume point stays")

	a2 := newJob("a")
	require.NoError(t, s.Create(ctx, newJob("b")))
	require.NoError(t, s.Create(ctx, a2))
	evs, next, err = s.EventsPage(ctx, p)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, a2.ID, evs[0].JobID)
	require.Equal(t, evs[0].Seq, next)

	// A full page resumes after its last event: the rest is read next.
	code := 0
	_, err = s.Settle(ctx, jobstore.SettleParams{ID: a1.ID, To: bgcmd.StateExited, ExitCode: &code})
	require.NoError(t, err)
	_, err = s.Settle(ctx, jobstore.SettleParams{ID: a2.ID, To: bgcmd.StateExited, ExitCode: &code})
	require.NoError(t, err)
	require.NoError(t, s.Create(ctx, newJob("b")))
	p = jobstore.EventsParams{Session: "a", Settled: true, After: next, Limit: 1}
	evs, next, err = s.EventsPage(ctx, p)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, a1.ID, evs[0].JobID)
	require.Equal(t, evs[0].Seq, next, "a full page may have more after it")
	p.After = next
	evs, _, err = s.EventsPage(ctx, p)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, a2.ID, evs[0].JobID)
}

// Whatever the filter, the page size and how transitions and polls
// interleave, a consumer that resumes after each page's next gets exactly
// the events that match, once each, in seq order: no event is skipped by
// resuming past the ones that did not match.
func TestEventsPagesDeliverEveryMatchOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openTest(t, jobstore.Options{})
	rng := rand.New(rand.NewPCG(21, 7))
	filters := []jobstore.EventsParams{
		{Session: "a", Limit: 1}, {Session: "a", Limit: 3}, {Session: "b", Settled: true, Limit: 2},
		{Settled: true, Limit: 1}, {Limit: 4}, {Session: "c", Limit: 5},
	}
	type feed struct {
		p   jobstore.EventsParams
		got []int64
	}
	feeds := make([]*feed, len(filters))
	for i, f := range filters {
		feeds[i] = &feed{p: f}
	}
	var running []*bgcmd.Job
	for range 300 {
		switch r := rng.IntN(10); {
		case r < 4 || len(running) == 0:
			j := newJob([]string{"a", "b", "c"}[rng.IntN(3)])
			require.NoError(t, s.Create(ctx, j))
			running = append(running, j)
		case r < 7:
			k := rng.IntN(len(running))
			code := rng.IntN(2)
			_, err := s.Settle(ctx, jobstore.SettleParams{ID: running[k].ID, To: bgcmd.StateExited, ExitCode: &code})
			require.NoError(t, err)
			running = append(running[:k], running[k+1:]...)
		default:
			f := feeds[rng.IntN(len(feeds))]
			evs, next, err := s.EventsPage(ctx, f.p)
			require.NoError(t, err)
			for _, e := range evs {
				f.got = append(f.got, e.Seq)
			}
			require.GreaterOrEqual(t, next, f.p.After)
			f.p.After = next
		}
	}
	for _, f := range feeds {
		for { // drain
			evs, next, err := s.EventsPage(ctx, f.p)
			require.NoError(t, err)
			for _, e := range evs {
				f.got = append(f.got, e.Seq)
			}
			f.p.After = next
			if len(evs) < f.p.Limit {
				break
			}
		}
		all := f.p
		all.After, all.Limit = 0, jobstore.MaxEventsLimit
		want, err := s.EventsAfter(ctx, all)
		require.NoError(t, err)
		wantSeqs := make([]int64, 0, len(want))
		for _, e := range want {
			wantSeqs = append(wantSeqs, e.Seq)
		}
		require.Equal(t, wantSeqs, f.got, "feed %+v", all)
	}
}
