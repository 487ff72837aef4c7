package jobstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// settle settles j in state to with one stdout artifact of content sha.
func settle(t *testing.T, s *jobstore.Store, j *bgcmd.Job, to bgcmd.State, sha string, bytes int64) {
	t.Helper()
	_, err := s.Settle(context.Background(), jobstore.SettleParams{ID: j.ID, To: to,
		Artifacts: []bgcmd.Artifact{{Stream: bgcmd.Stdout, SHA256: sha, Bytes: bytes}}})
	require.NoError(t, err)
}

func ids(jobs []jobstore.PrunedJob) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

func TestPruneDeletesSettledReadJobsAndSparesRunningAndUnreadOnes(t *testing.T) {
	t.Parallel()
	eachBackend(t, testPruneDeletesSettledReadJobsAndSparesRunningAndUnreadOnes)
}

func testPruneDeletesSettledReadJobsAndSparesRunningAndUnreadOnes(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	s := openTest(t, jobstore.Options{Now: func() time.Time { return now }})

	old, unread, running, shared, keeper := newJob("a"), newJob("a"), newJob("a"), newJob("a"), newJob("b")
	for _, j := range []*bgcmd.Job{old, unread, running, shared, keeper} {
		require.NoError(t, s.Create(ctx, j))
	}
	settle(t, s, old, bgcmd.StateExited, "aaaa", 10)
	settle(t, s, unread, bgcmd.StateTimeout, "bbbb", 20)
	settle(t, s, shared, bgcmd.StateExited, "cccc", 30)
	settle(t, s, keeper, bgcmd.StateExited, "cccc", 30) // same content as shared
	for _, j := range []*bgcmd.Job{old, shared, keeper} {
		_, err := s.MarkSeen(ctx, j.ID)
		require.NoError(t, err)
	}
	now = now.Add(time.Hour)

	sel := jobstore.PruneParams{Session: "a", DryRun: true}
	dry, err := s.Prune(ctx, sel)
	require.NoError(t, err)
	require.Equal(t, []string{old.ID, shared.ID}, ids(dry.Jobs), "running and unread jobs are spared")
	require.Equal(t, []jobstore.UnreferencedArtifact{{SHA256: "aaaa", Bytes: 10}}, dry.Unreferenced,
		"a file another job still references is not freed")
	require.Equal(t, int64(10), dry.FreedBytes)
	_, err = s.Get(ctx, old.ID)
	require.NoError(t, err, "a dry run deletes nothing")

	sel.DryRun = false
	res, err := s.Prune(ctx, sel)
	require.NoError(t, err)
	require.Equal(t, ids(dry.Jobs), ids(res.Jobs), "the dry run lists exactly what goes")
	require.Equal(t, dry.Unreferenced, res.Unreferenced)
	require.Equal(t, int64(4), res.Events, "creation and settle of two jobs")
	require.Equal(t, int64(2), res.Artifacts)
	for _, j := range []*bgcmd.Job{old, shared} {
		_, err := s.Get(ctx, j.ID)
		require.ErrorIs(t, err, bgcmd.ErrNotFound)
		ev, err := s.Events(ctx, j.ID)
		require.NoError(t, err)
		require.Empty(t, ev)
	}
	for _, j := range []*bgcmd.Job{unread, running, keeper} {
		_, err := s.Get(ctx, j.ID)
		require.NoError(t, err)
	}
	ref, err := s.ReferencedArtifacts(ctx, []string{"aaaa", "bbbb", "cccc"})
	require.NoError(t, err)
	require.Equal(t, map[string]bool{"bbbb": true, "cccc": true}, ref)

	res, err = s.Prune(ctx, jobstore.PruneParams{Session: "a", IncludeUnread: true})
	require.NoError(t, err)
	require.Equal(t, []string{unread.ID}, ids(res.Jobs), "--include-unread takes unread jobs, never running ones")
}

func TestPruneSelectorsCombine(t *testing.T) {
	t.Parallel()
	eachBackend(t, testPruneSelectorsCombine)
}

func testPruneSelectorsCombine(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)
	s := openTest(t, jobstore.Options{Now: func() time.Time { return now }})
	var a, b []*bgcmd.Job
	for i := range 6 {
		now = now.Add(time.Minute)
		ja, jb := newJob("a"), newJob("b")
		require.NoError(t, s.Create(ctx, ja))
		require.NoError(t, s.Create(ctx, jb))
		state := bgcmd.StateExited
		if i%2 == 1 {
			state = bgcmd.StateKilled
		}
		settle(t, s, ja, state, "a", 1)
		settle(t, s, jb, state, "b", 1)
		for _, j := range []*bgcmd.Job{ja, jb} {
			_, err := s.MarkSeen(ctx, j.ID)
			require.NoError(t, err)
		}
		a, b = append(a, ja), append(b, jb)
	}
	now = now.Add(time.Minute)

	res, err := s.Prune(ctx, jobstore.PruneParams{KeepLast: 4, DryRun: true})
	require.NoError(t, err)
	require.Equal(t, []string{a[0].ID, b[0].ID, a[1].ID, b[1].ID}, ids(res.Jobs), "keep-last counts per session")

	res, err = s.Prune(ctx, jobstore.PruneParams{KeepLast: 1, States: []bgcmd.State{bgcmd.StateKilled}, Session: "b", DryRun: true})
	require.NoError(t, err)
	require.Equal(t, []string{b[1].ID, b[3].ID}, ids(res.Jobs), "the newest killed job of b stays")

	cut := time.Date(2026, 5, 1, 0, 3, 0, 0, time.UTC) // settled at 0:01, 0:02 go
	res, err = s.Prune(ctx, jobstore.PruneParams{FinishedBefore: cut, DryRun: true})
	require.NoError(t, err)
	require.Equal(t, []string{a[0].ID, b[0].ID, a[1].ID, b[1].ID}, ids(res.Jobs))
	require.Empty(t, res.Unreferenced, "newer jobs share the same files")

	res, err = s.Prune(ctx, jobstore.PruneParams{States: []bgcmd.State{bgcmd.StateExited}, BatchSize: 2})
	require.NoError(t, err)
	require.Len(t, res.Jobs, 6, "batches cover every selected job")
	left, err := s.List(ctx, jobstore.ListParams{})
	require.NoError(t, err)
	require.Len(t, left.Jobs, 6)
	for _, j := range left.Jobs {
		require.Equal(t, bgcmd.StateKilled, j.State)
	}
}

func TestPruneRefusesToSelectEverythingOrRunningJobs(t *testing.T) {
	t.Parallel()
	eachBackend(t, testPruneRefusesToSelectEverythingOrRunningJobs)
}

func testPruneRefusesToSelectEverythingOrRunningJobs(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, jobstore.Options{})
	_, err := s.Prune(ctx, jobstore.PruneParams{IncludeUnread: true})
	require.ErrorIs(t, err, jobstore.ErrNoSelector)
	_, err = s.Prune(ctx, jobstore.PruneParams{States: []bgcmd.State{bgcmd.StateRunning}})
	require.ErrorContains(t, err, `"running" is not a settled state`)
	_, err = s.Prune(ctx, jobstore.PruneParams{KeepLast: -1, Session: "a"})
	require.ErrorContains(t, err, "negative")
}

func TestJobStatesNamesKnownJobsOnly(t *testing.T) {
	t.Parallel()
	eachBackend(t, testJobStatesNamesKnownJobsOnly)
}

func testJobStatesNamesKnownJobsOnly(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, jobstore.Options{})
	j := newJob("a")
	require.NoError(t, s.Create(ctx, j))
	got, err := s.JobStates(ctx, []string{j.ID, "no-such-job"})
	require.NoError(t, err)
	require.Equal(t, map[string]bgcmd.State{j.ID: bgcmd.StateRunning}, got)
}

// Vacuum after a prune leaves the store whole on both backends.
func TestVacuumAfterPrune(t *testing.T) {
	t.Parallel()
	eachBackend(t, testVacuumAfterPrune)
}

func testVacuumAfterPrune(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, jobstore.Options{})
	j := newJob("v")
	require.NoError(t, s.Create(ctx, j))
	_, err := s.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: bgcmd.StateKilled})
	require.NoError(t, err)
	_, err = s.MarkSeen(ctx, j.ID)
	require.NoError(t, err)
	res, err := s.Prune(ctx, jobstore.PruneParams{Session: "v"})
	require.NoError(t, err)
	require.Len(t, res.Jobs, 1)
	require.NoError(t, s.Vacuum(ctx))
	size, err := s.Size(ctx)
	require.NoError(t, err)
	require.Positive(t, size)
	rep, err := s.VerifyChain(ctx, jobstore.VerifyChainParams{})
	require.NoError(t, err)
	require.Nil(t, rep.Problem)
	require.Equal(t, int64(2), rep.Pruned)
}

func TestPruneReportsEachJobAsItWasSettled(t *testing.T) {
	t.Parallel()
	eachBackend(t, testPruneReportsEachJobAsItWasSettled)
}

// testPruneReportsEachJobAsItWasSettled checks every field of the report's
// jobs: the session, the state, the exit code or signal, the argv, when it
// finished and the bytes of its banked output (both streams), read back from
// the rows the prune deletes.
func testPruneReportsEachJobAsItWasSettled(t *testing.T) {
	ctx := context.Background()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	s := openTest(t, jobstore.Options{Now: func() time.Time { return now }})
	failed, killed := newJob("a", "/usr/bin/make", "-j", "4 words"), newJob("b", "/bin/sleep", "9")
	for _, j := range []*bgcmd.Job{failed, killed} {
		require.NoError(t, s.Create(ctx, j))
	}
	code := 3
	failedAt, killedAt := now.Add(time.Minute), now.Add(2*time.Minute)
	_, err := s.Settle(ctx, jobstore.SettleParams{ID: failed.ID, To: bgcmd.StateExited, ExitCode: &code,
		FinishedAt: failedAt, Artifacts: []bgcmd.Artifact{{Stream: bgcmd.Stdout, SHA256: "dddd", Bytes: 10},
			{Stream: bgcmd.Stderr, SHA256: "eeee", Bytes: 5}}})
	require.NoError(t, err)
	_, err = s.Settle(ctx, jobstore.SettleParams{ID: killed.ID, To: bgcmd.StateKilled, Signal: "SIGTERM",
		FinishedAt: killedAt})
	require.NoError(t, err)
	now = now.Add(time.Hour)

	for _, dry := range []bool{true, false} {
		res, err := s.Prune(ctx, jobstore.PruneParams{FinishedBefore: now, IncludeUnread: true, DryRun: dry})
		require.NoError(t, err)
		require.Len(t, res.Jobs, 2, "dry run %v", dry)
		got := res.Jobs[0]
		require.True(t, got.FinishedAt.Equal(failedAt), "dry run %v: finished at %v", dry, got.FinishedAt)
		got.FinishedAt = time.Time{}
		require.Equal(t, jobstore.PrunedJob{ID: failed.ID, Session: "a", State: bgcmd.StateExited, ExitCode: &code,
			Argv: []string{"/usr/bin/make", "-j", "4 words"}, Bytes: 15}, got, "dry run %v", dry)
		got = res.Jobs[1]
		require.True(t, got.FinishedAt.Equal(killedAt), "dry run %v: finished at %v", dry, got.FinishedAt)
		got.FinishedAt = time.Time{}
		require.Equal(t, jobstore.PrunedJob{ID: killed.ID, Session: "b", State: bgcmd.StateKilled, Signal: "SIGTERM",
			Argv: []string{"/bin/sleep", "9"}}, got, "dry run %v", dry)
	}
}
