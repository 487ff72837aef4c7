package jobstore_test

import (
	"context"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// A read-only store reads what the writer wrote and refuses to write.
// SQLite only: OpenReadOnly takes a file path.
func TestOpenReadOnlyRefusesWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bgcmd.db")
	w := openTest(t, jobstore.Options{Path: path})
	j := newJob("s")
	require.NoError(t, w.Create(ctx, j))
	_, err := jobstore.OpenReadOnly(ctx, filepath.Join(t.TempDir(), "missing.db"))
	require.ErrorContains(t, err, "read-only")

	ro, err := jobstore.OpenReadOnly(ctx, path)
	require.NoError(t, err)
	defer ro.Close()
	require.True(t, ro.ReadOnly())
	require.False(t, w.ReadOnly())
	got, err := ro.Get(ctx, j.ID)
	require.NoError(t, err)
	require.Equal(t, j.ID, got.ID)
	require.Error(t, ro.Create(ctx, newJob("s")))
	err = ro.Query(ctx, "UPDATE jobs SET state = 'killed'", func([]string) error { return nil },
		func(jobstore.QueryRow) error { return nil })
	require.ErrorContains(t, err, "readonly")
}

// Filter keeps jobs by label key, or key and value, with the other filters
// and keyset paging of List.
func TestFilterByLabel(t *testing.T) {
	t.Parallel()
	eachBackend(t, testFilterByLabel)
}

func testFilterByLabel(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, jobstore.Options{})
	mk := func(session string, labels map[string]string) string {
		j := newJob(session)
		j.Labels = labels
		require.NoError(t, s.Create(ctx, j))
		return j.ID
	}
	a := mk("x", map[string]string{"ci": "yes"})
	b := mk("x", map[string]string{"ci": "no", "team": "core"})
	c := mk("y", map[string]string{"ci": "yes"})
	mk("x", nil)
	ids := func(p jobstore.FilterParams) []string {
		res, err := s.Filter(ctx, p)
		require.NoError(t, err)
		var out []string
		for _, j := range res.Jobs {
			out = append(out, j.ID)
		}
		return out
	}
	require.Equal(t, []string{c, b, a}, ids(jobstore.FilterParams{LabelKey: "ci"}))
	require.Equal(t, []string{c, a}, ids(jobstore.FilterParams{LabelKey: "ci", LabelValue: "yes"}))
	require.Equal(t, []string{a}, ids(jobstore.FilterParams{LabelKey: "ci", LabelValue: "yes", ListParams: jobstore.ListParams{Session: "x"}}))
	require.Empty(t, ids(jobstore.FilterParams{LabelKey: "ci' OR 1=1 --"}))
	res, err := s.Filter(ctx, jobstore.FilterParams{LabelKey: "ci", ListParams: jobstore.ListParams{Limit: 2}})
	require.NoError(t, err)
	require.Equal(t, b, res.NextBefore)
	require.Equal(t, []string{a}, ids(jobstore.FilterParams{LabelKey: "ci", ListParams: jobstore.ListParams{Before: res.NextBefore}}))
	_, err = s.Filter(ctx, jobstore.FilterParams{ListParams: jobstore.ListParams{States: []bgcmd.State{"nope"}}})
	require.ErrorContains(t, err, "unknown state")
}

// JobsPerHour, DurationByExe and Overview count what they say.
func TestChartQueries(t *testing.T) {
	t.Parallel()
	eachBackend(t, testChartQueries)
}

func testChartQueries(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 10, 30, 0, 0, time.UTC)
	clock := now
	s := openTest(t, jobstore.Options{Now: func() time.Time { return clock }})
	settle := func(exe string, to bgcmd.State, code *int, ran time.Duration) {
		j := newJob("s", exe)
		require.NoError(t, s.Create(ctx, j))
		require.NoError(t, s.MarkStarted(ctx, jobstore.StartedParams{ID: j.ID, PID: 1, PGID: 1, StartedAt: clock}))
		if to != bgcmd.StateRunning {
			_, err := s.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: to, ExitCode: code, FinishedAt: clock.Add(ran)})
			require.NoError(t, err)
		}
	}
	zero, one := 0, 1
	settle("/usr/bin/make", bgcmd.StateExited, &zero, 2*time.Second)
	settle("/usr/bin/make", bgcmd.StateExited, &one, 4*time.Second)
	clock = now.Add(-2 * time.Hour)
	settle("/usr/bin/go", bgcmd.StateTimeout, nil, 10*time.Second)
	settle("/usr/bin/go", bgcmd.StateRunning, nil, 0)
	clock = now

	hours, err := s.JobsPerHour(ctx, now.Add(-24*time.Hour), now.Add(time.Hour))
	require.NoError(t, err)
	h8, h10 := time.Date(2026, 3, 1, 8, 0, 0, 0, time.UTC), time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	require.Equal(t, []jobstore.HourCount{
		{Hour: h8, Outcome: jobstore.OutcomeRunning, Jobs: 1}, {Hour: h8, Outcome: jobstore.OutcomeTimeout, Jobs: 1},
		{Hour: h10, Outcome: jobstore.OutcomeFailed, Jobs: 1}, {Hour: h10, Outcome: jobstore.OutcomeOK, Jobs: 1},
	}, hours)
	hours, err = s.JobsPerHour(ctx, now.Add(-time.Hour), now.Add(time.Hour))
	require.NoError(t, err)
	require.Len(t, hours, 2)

	exes, err := s.DurationByExe(ctx, now.Add(-24*time.Hour), now.Add(time.Hour), 0)
	require.NoError(t, err)
	require.Len(t, exes, 2)
	require.Equal(t, "/usr/bin/go", exes[0].Exe)
	require.Equal(t, 1, exes[0].Jobs)
	require.InDelta(t, float64(10*time.Second), float64(exes[0].Mean), float64(time.Millisecond))
	require.Equal(t, "/usr/bin/make", exes[1].Exe)
	require.Equal(t, 2, exes[1].Jobs)
	require.InDelta(t, float64(3*time.Second), float64(exes[1].Mean), float64(time.Millisecond))
	require.InDelta(t, float64(4*time.Second), float64(exes[1].Max), float64(time.Millisecond))

	require.NoError(t, s.RecordRefusal(ctx, &bgcmd.Refusal{Argv: []string{"rm"}, Code: "not_allowed", Message: "no"}))
	ov, err := s.Overview(ctx, now.Add(-time.Hour))
	require.NoError(t, err)
	require.Equal(t, jobstore.Overview{Running: 1, Unread: 3, Refusals: 1}, ov)
}

// Charts gives, in one pass, what JobsPerHour and DurationByExe give, and
// RecentOutcomes counts the newest jobs only.
func TestChartsMatchesTheTwoQueriesAndRecentOutcomes(t *testing.T) {
	t.Parallel()
	eachBackend(t, testChartsMatchesTheTwoQueriesAndRecentOutcomes)
}

func testChartsMatchesTheTwoQueriesAndRecentOutcomes(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 3, 1, 10, 30, 0, 0, time.UTC)
	clock := now.Add(-5 * time.Hour)
	s := openTest(t, jobstore.Options{Now: func() time.Time { return clock }})
	codes := []int{0, 1, 0, 2, 0}
	for i := 0; i < 30; i++ {
		exe := []string{"/usr/bin/make", "/usr/bin/go", "/usr/bin/git"}[i%3]
		j := newJob("s", exe)
		require.NoError(t, s.Create(ctx, j))
		require.NoError(t, s.MarkStarted(ctx, jobstore.StartedParams{ID: j.ID, PID: 1, PGID: 1, StartedAt: clock}))
		if i%7 != 6 {
			code := codes[i%5]
			to := bgcmd.StateExited
			if i%11 == 5 {
				to = bgcmd.StateKilled
			}
			_, err := s.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: to, ExitCode: &code,
				FinishedAt: clock.Add(time.Duration(i+1) * 100 * time.Millisecond)})
			require.NoError(t, err)
		}
		clock = clock.Add(10 * time.Minute)
	}
	since, until := now.Add(-24*time.Hour), now.Add(time.Hour)
	hours, err := s.JobsPerHour(ctx, since, until)
	require.NoError(t, err)
	exes, err := s.DurationByExe(ctx, since, until, 2)
	require.NoError(t, err)
	got, err := s.Charts(ctx, since, until, 2)
	require.NoError(t, err)
	sortHours := func(h []jobstore.HourCount) {
		sort.Slice(h, func(i, j int) bool {
			if !h[i].Hour.Equal(h[j].Hour) {
				return h[i].Hour.Before(h[j].Hour)
			}
			return h[i].Outcome < h[j].Outcome
		})
	}
	sortHours(hours)
	sortHours(got.Hours)
	require.Equal(t, hours, got.Hours)
	require.Len(t, got.Exes, 2)
	for i := range exes {
		require.Equal(t, exes[i].Exe, got.Exes[i].Exe)
		require.Equal(t, exes[i].Jobs, got.Exes[i].Jobs)
		require.InDelta(t, float64(exes[i].Mean), float64(got.Exes[i].Mean), float64(time.Millisecond))
		require.InDelta(t, float64(exes[i].Max), float64(got.Exes[i].Max), float64(time.Millisecond))
	}

	recent, err := s.RecentOutcomes(ctx, 7)
	require.NoError(t, err)
	total := 0
	for _, r := range recent {
		total += r.Jobs
	}
	require.Equal(t, 7, total)
	all, err := s.RecentOutcomes(ctx, 0)
	require.NoError(t, err)
	byOutcome := map[jobstore.Outcome]int{}
	for _, r := range all {
		byOutcome[r.Outcome] = r.Jobs
	}
	want := map[jobstore.Outcome]int{}
	for _, h := range hours {
		want[h.Outcome] += h.Jobs
	}
	require.Equal(t, want, byOutcome)
}
