package main

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestReconcileRecountRebuildsTheCountsAfterAnEditByHand: bgcmd keeps the
// session counters and the charts' roll-up with its own writes; a row of
// jobs changed by another SQLite client leaves them as they were, and
// `bgcmd reconcile --recount` makes them what the jobs table says.
func TestReconcileRecountRebuildsTheCountsAfterAnEditByHand(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	id := h.settled(fixture(t, "exit-with.sh"), "0") // read by the wait
	counts := func() string {
		h.t.Helper()
		return strings.TrimSpace(h.ok("sql", "--csv", `SELECT (SELECT SUM(finished) FROM session_counters)
			|| ' ' || (SELECT group_concat(outcome || '=' || jobs) FROM job_hours)`))
	}
	require.Contains(t, counts(), "0 ok=1")

	h.editDB(`UPDATE jobs SET seen_at = NULL, exit_code = 3 WHERE id = '` + id + `'`)
	require.Contains(t, counts(), "0 ok=1", "an edit by hand is not counted")

	r := h.bgcmd("reconcile", "--recount")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "recounted the session counters")
	require.Contains(t, counts(), "1 failed=1", "the recount reads the jobs table")
}
