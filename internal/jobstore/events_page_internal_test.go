package jobstore

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
)

func pageJob(session string) *bgcmd.Job {
	return &bgcmd.Job{Session: session, Argv: []string{"/bin/true"}, Exe: "/bin/true", Cwd: "/",
		Timeout: time.Minute, KillGrace: time.Second, MaxOutputBytes: 1 << 20}
}

// An event committed after a page read the newest seq, and before the page
// itself, is left to the next page: the page stops at that newest seq, so
// resuming after it neither skips nor repeats the event.
func TestEventsPageLeavesAnEventCommittedMeanwhileToTheNext(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, Options{Path: filepath.Join(t.TempDir(), "bgcmd.db")})
	require.NoError(t, err)
	defer s.Close()
	first := pageJob("a")
	require.NoError(t, s.Create(ctx, first))
	late := pageJob("a")
	testHookEventsNewest = func() {
		testHookEventsNewest = nil
		require.NoError(t, s.Create(ctx, late))
	}
	defer func() { testHookEventsNewest = nil }()

	p := EventsParams{Session: "a", Limit: 10}
	evs, next, err := s.EventsPage(ctx, p)
	require.NoError(t, err)
	require.Len(t, evs, 1)
	require.Equal(t, first.ID, evs[0].JobID)
	p.After = next
	evs, _, err = s.EventsPage(ctx, p)
	require.NoError(t, err)
	require.Len(t, evs, 1, "the event committed meanwhile comes once, on the next page")
	require.Equal(t, late.ID, evs[0].JobID)
}

// explain returns SQLite's plan of q on s, one detail per line.
func explain(t *testing.T, s *Store, q string, args ...any) string {
	t.Helper()
	plan, err := QueryPlan(s.r.DB, q, args...)
	require.NoError(t, err)
	return plan
}

// A feed's poll reads the new events by seq and looks each one's job up:
// its cost follows the events since the last poll, not the jobs of its
// session (the planner, left alone, starts from the session's index and
// reads every job of it, then sorts). A wide range, or a filter by job,
// is read through the index.
func TestEventsPageReadsNewEventsFirst(t *testing.T) {
	ctx := context.Background()
	s, err := Open(ctx, Options{Path: filepath.Join(t.TempDir(), "bgcmd.db")})
	require.NoError(t, err)
	defer s.Close()
	for range 3 {
		require.NoError(t, s.Create(ctx, pageJob("a")))
	}

	q, args, err := s.eventsQuery(EventsParams{Session: "a", Settled: true, After: 10}, 12, 100)
	require.NoError(t, err)
	plan := explain(t, s, q, args...)
	first, _, _ := strings.Cut(plan, "\n")
	require.Regexp(t, `^SEARCH e USING INTEGER PRIMARY KEY \(rowid>\? AND rowid<\?\)$`, first, "plan:\n%s", plan)
	require.NotContains(t, plan, "TEMP B-TREE", "read in seq order, no sort:\n%s", plan)

	q, args, err = s.eventsQuery(EventsParams{Session: "a", After: 10}, 10+eventsScanFirst+1, 100)
	require.NoError(t, err)
	require.Contains(t, explain(t, s, q, args...), "SEARCH j USING INDEX", "a catch-up reads the session's jobs")

	q, args, err = s.eventsQuery(EventsParams{JobIDs: []string{"x", "y"}, After: 10}, 12, 100)
	require.NoError(t, err)
	require.Contains(t, explain(t, s, q, args...), "job_events_job", "a job's events through their index")
}
