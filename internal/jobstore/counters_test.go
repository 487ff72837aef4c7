package jobstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

func TestCountersAndMarkSeen(t *testing.T) {
	t.Parallel()
	eachBackend(t, testCountersAndMarkSeen)
}

func testCountersAndMarkSeen(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, jobstore.Options{})
	a, b, other := newJob("agent"), newJob("agent"), newJob("other")
	for _, j := range []*bgcmd.Job{a, b, other} {
		require.NoError(t, s.Create(ctx, j))
	}
	c, err := s.Counters(ctx, "agent")
	require.NoError(t, err)
	require.Equal(t, bgcmd.Counters{Running: 2, Finished: 0}, c)

	seen, err := s.MarkSeen(ctx, a.ID)
	require.NoError(t, err)
	require.False(t, seen, "a running job cannot be marked seen")

	_, err = s.Settle(ctx, jobstore.SettleParams{ID: a.ID, To: bgcmd.StateExited})
	require.NoError(t, err)
	c, err = s.Counters(ctx, "agent")
	require.NoError(t, err)
	require.Equal(t, bgcmd.Counters{Running: 1, Finished: 1}, c)

	seen, err = s.MarkSeen(ctx, a.ID)
	require.NoError(t, err)
	require.True(t, seen)
	seen, err = s.MarkSeen(ctx, a.ID)
	require.NoError(t, err)
	require.False(t, seen, "mark-seen clears a job exactly once")
	c, err = s.Counters(ctx, "agent")
	require.NoError(t, err)
	require.Equal(t, bgcmd.Counters{Running: 1, Finished: 0}, c)

	c, err = s.Counters(ctx, "other")
	require.NoError(t, err)
	require.Equal(t, bgcmd.Counters{Running: 1, Finished: 0}, c, "sessions are counted apart")
}

func TestListFiltersAndKeysetPagination(t *testing.T) {
	t.Parallel()
	eachBackend(t, testListFiltersAndKeysetPagination)
}

func testListFiltersAndKeysetPagination(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	s := openTest(t, jobstore.Options{Now: func() time.Time { return now }})
	var ids []string
	for i := range 25 {
		now = now.Add(time.Minute)
		session := "a"
		if i%5 == 0 {
			session = "b"
		}
		j := newJob(session, "/usr/bin/make")
		if i%2 == 0 {
			j = newJob(session, "/usr/bin/git")
			j.Exe = "/usr/bin/git"
		}
		require.NoError(t, s.Create(ctx, j))
		ids = append(ids, j.ID)
		if i%3 == 0 {
			_, err := s.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: bgcmd.StateTimeout})
			require.NoError(t, err)
		}
	}

	// Pages of 10, newest first, cover every job exactly once.
	var got []string
	before := ""
	for pages := 0; ; pages++ {
		require.Less(t, pages, 10)
		res, err := s.List(ctx, jobstore.ListParams{Limit: 10, Before: before})
		require.NoError(t, err)
		for _, j := range res.Jobs {
			got = append(got, j.ID)
		}
		if res.NextBefore == "" {
			break
		}
		before = res.NextBefore
	}
	require.Len(t, got, 25)
	for i := range got {
		require.Equal(t, ids[len(ids)-1-i], got[i], "newest first")
	}

	res, err := s.List(ctx, jobstore.ListParams{States: []bgcmd.State{bgcmd.StateTimeout}, Session: "a"})
	require.NoError(t, err)
	for _, j := range res.Jobs {
		require.Equal(t, bgcmd.StateTimeout, j.State)
		require.Equal(t, "a", j.Session)
	}
	require.Len(t, res.Jobs, 7) // i in {3,6,9,12,18,21,24}

	res, err = s.List(ctx, jobstore.ListParams{Exe: "/usr/bin/git", Unread: true})
	require.NoError(t, err)
	require.Len(t, res.Jobs, 5) // even i that are multiples of 3: 0,6,12,18,24
	for _, j := range res.Jobs {
		require.Equal(t, "/usr/bin/git", j.Exe)
	}

	since := time.Date(2026, 5, 1, 0, 10, 0, 0, time.UTC)
	until := time.Date(2026, 5, 1, 0, 20, 0, 0, time.UTC)
	res, err = s.List(ctx, jobstore.ListParams{Since: since, Until: until})
	require.NoError(t, err)
	require.Len(t, res.Jobs, 10)

	_, err = s.List(ctx, jobstore.ListParams{Limit: jobstore.MaxListLimit + 1})
	require.ErrorContains(t, err, "out of range")
	_, err = s.List(ctx, jobstore.ListParams{States: []bgcmd.State{"nope"}})
	require.ErrorContains(t, err, `unknown state "nope"`)
}

func TestRefusalsAreRecorded(t *testing.T) {
	t.Parallel()
	eachBackend(t, testRefusalsAreRecorded)
}

func testRefusalsAreRecorded(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, jobstore.Options{})
	require.NoError(t, s.RecordRefusal(ctx, &bgcmd.Refusal{Session: "a", Argv: []string{"rm", "-rf", "/"},
		Cwd: "/", Code: "not_allowlisted", Message: "rm is not allowed"}))
	rs, err := s.Refusals(ctx, 10)
	require.NoError(t, err)
	require.Len(t, rs, 1)
	require.Equal(t, []string{"rm", "-rf", "/"}, rs[0].Argv)
	require.Equal(t, "not_allowlisted", rs[0].Code)
}
