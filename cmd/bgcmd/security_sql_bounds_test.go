package main

import (
	"bytes"
	"context"
	"os/exec"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// sqlGuard bounds how long a test lets a `bgcmd sql` that does not stop
// by itself run before it is killed: not a speed claim, only a guard so a
// hole fails the test rather than hanging it. The queries below would run
// for hours (or for ever) if nothing interrupted them.
const sqlGuard = 60 * time.Second

// runSQLGuarded runs `bgcmd sql ARGS…` in h, killing it after guard, and reports its result and
// whether the guard had to kill it.
func runSQLGuarded(t *testing.T, h *home, guard time.Duration, args ...string) (result, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), guard)
	defer cancel()
	cmd := exec.CommandContext(ctx, binary, append([]string{"sql"}, args...)...)
	cmd.Dir, cmd.Env = h.root, h.env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	killed := ctx.Err() != nil
	if killed {
		return result{stdout: out.String(), stderr: errb.String(), code: -1}, true
	}
	return resultOf(t, err, &out, &errb), false
}

// TestSQLTimeoutStopsAQueryAfterItsFirstRow: the SQLite driver interrupts
// a statement only until its first row. A query whose first row came at
// once and whose second never does (a recursive CTE that matches its
// first value and then scans for ever) had run past --timeout without
// end; the README promises "A query runs at most --timeout".
func TestSQLTimeoutStopsAQueryAfterItsFirstRow(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	h.ok("list") // creates the store
	for _, format := range [][]string{nil, {"--csv"}} {
		args := append(append([]string{"--timeout", "300ms"}, format...),
			"WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n) SELECT i FROM n WHERE i = 1 OR i < 0")
		r, killed := runSQLGuarded(t, h, sqlGuard, args...)
		require.False(t, killed, "bgcmd sql %v ran on past --timeout 300ms until the test's guard of %s killed it "+
			"(stdout %q): the interrupt covers only the first row", format, sqlGuard, r.stdout)
		require.Equal(t, exitRuntime, r.code, "stdout %q stderr %q", r.stdout, r.stderr)
		require.Contains(t, r.stderr, "time limit")
		if format != nil {
			require.Equal(t, "i\n1\n", r.stdout, "the row read before the limit is printed")
		}
	}
}
