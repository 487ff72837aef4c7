package jobstore_test

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// sha64 is a well-formed artifact name made from seed.
func sha64(seed string) string {
	sum := sha256.Sum256([]byte(seed))
	return hex.EncodeToString(sum[:])
}

// Every kind of transition chains its event as it is inserted, from what
// its transaction stored; verification recomputes each canonical form from
// the rows alone, so a fact the writer hashed differently from what it
// stored (a NULL for an empty string, a boolean, an exit code, a missing
// artifact) stops it.
func TestChainVerifiesEveryKindOfTransition(t *testing.T) {
	t.Parallel()
	eachBackend(t, testChainVerifiesEveryKindOfTransition)
}

func testChainVerifiesEveryKindOfTransition(t *testing.T) {
	ctx := context.Background()
	s := openTest(t, jobstore.Options{})
	events := 0

	// No executable hash (stored NULL), a replaced environment, a settle by
	// signal with no exit code, an error with characters the canonical
	// form escapes, and a stdout artifact only.
	a := newJob("kinds", "/bin/echo", "a\tb")
	a.EnvReplaced, a.EnvNames = true, []string{"LANG", "CI"}
	a.Labels = map[string]string{"k": "v"}
	require.NoError(t, s.Create(ctx, a))
	_, err := s.Settle(ctx, jobstore.SettleParams{ID: a.ID, To: bgcmd.StateKilled, Signal: "SIGKILL",
		Error: "killed \"by request\"\n\x01", Artifacts: []bgcmd.Artifact{
			{Stream: bgcmd.Stdout, SHA256: sha64("a1"), Bytes: 7, Chars: 7, Lines: 1}}})
	require.NoError(t, err)
	events += 2

	// Queued, dispatched (queued → running), then settled with a stderr
	// artifact only.
	b := newJob("kinds", "/bin/echo", "b")
	b.ExeSHA256 = sha64("b0")
	require.NoError(t, s.CreateQueued(ctx, b, jobstore.QueueLimits{}))
	res, err := s.Dispatch(ctx, func(*jobstore.Record) string { return "" })
	require.NoError(t, err)
	require.Len(t, res.Started, 1)
	zero := 0
	_, err = s.Settle(ctx, jobstore.SettleParams{ID: b.ID, To: bgcmd.StateExited, ExitCode: &zero,
		Detail: map[string]any{"note": "done"}, Artifacts: []bgcmd.Artifact{
			{Stream: bgcmd.Stderr, SHA256: sha64("b2"), Bytes: 3, Chars: 3, Lines: 0}}})
	require.NoError(t, err)
	events += 3

	// Queued, then settled without ever starting.
	c := newJob("kinds", "/bin/echo", "c")
	require.NoError(t, s.CreateQueued(ctx, c, jobstore.QueueLimits{}))
	_, err = s.SettleQueued(ctx, c.ID, bgcmd.StateDependencyFailed, "job x failed", map[string]any{"after": "x"})
	require.NoError(t, err)
	events += 2

	// Settled among others, with no row returned (SettleMany), exit code 3.
	d := newJob("kinds", "/bin/false")
	require.NoError(t, s.Create(ctx, d))
	three := 3
	errs, err := s.SettleMany(ctx, []jobstore.SettleParams{{ID: d.ID, To: bgcmd.StateExited, ExitCode: &three}})
	require.NoError(t, err)
	require.NoError(t, errs[0])
	events += 2

	rep, err := s.VerifyChain(ctx, jobstore.VerifyChainParams{})
	require.NoError(t, err)
	require.Nil(t, rep.Problem, "every event verifies from the rows as stored")
	require.EqualValues(t, events, rep.Events)
	require.EqualValues(t, events, rep.Head.Seq)
	for _, id := range []string{a.ID, b.ID, c.ID, d.ID} {
		rows, err := s.JobChain(ctx, id)
		require.NoError(t, err)
		for _, r := range rows {
			require.Equal(t, jobstore.HashCanonical(r.Canonical), r.Hash, "job %s, event %d", id, r.EventSeq)
		}
	}
}

// An event's seq is never one an earlier event had, even once every event
// is pruned: job_events is AUTOINCREMENT, and the chained insert picks the
// seq that would have given.
func TestChainedEventSeqIsNeverReused(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "bgcmd.db")
	s, err := jobstore.Open(ctx, jobstore.Options{Path: path})
	require.NoError(t, err)
	defer s.Close()
	zero := 0
	for range 2 {
		j := newJob("seq", "/bin/true")
		require.NoError(t, s.Create(ctx, j))
		_, err := s.Settle(ctx, jobstore.SettleParams{ID: j.ID, To: bgcmd.StateExited, ExitCode: &zero})
		require.NoError(t, err)
	}
	pruned, err := s.Prune(ctx, jobstore.PruneParams{FinishedBefore: time.Now().Add(time.Minute), IncludeUnread: true})
	require.NoError(t, err)
	require.Len(t, pruned.Jobs, 2)
	db := openRaw(t, path)
	var left int
	require.NoError(t, db.QueryRow(`SELECT COUNT(*) FROM job_events`).Scan(&left))
	require.Zero(t, left)

	j := newJob("seq", "/bin/true")
	require.NoError(t, s.Create(ctx, j))
	var seq int64
	var chainSeq sql.NullInt64
	require.NoError(t, db.QueryRow(`SELECT seq, chain_seq FROM job_events WHERE job_id = ?`, j.ID).Scan(&seq, &chainSeq))
	require.EqualValues(t, 5, seq, "after events 1 to 4, pruned")
	require.EqualValues(t, 5, chainSeq.Int64)
	rep, err := s.VerifyChain(ctx, jobstore.VerifyChainParams{})
	require.NoError(t, err)
	require.Nil(t, rep.Problem)
}
