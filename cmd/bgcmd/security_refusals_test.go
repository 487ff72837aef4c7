package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// storeBytes is the size of the database with its WAL.
func storeBytes(t *testing.T, dir string) int64 {
	t.Helper()
	var n int64
	for _, f := range []string{"bgcmd.db", "bgcmd.db-wal"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err == nil {
			n += fi.Size()
		}
	}
	return n
}

// TestRefusalsStoreABoundedRecord is the exploit of the refusal table as a
// way to fill the disk: ten refused starts of about 1 MB of argv each must
// not grow the store by anything like 10 MB. What is kept is a few KiB,
// marked as cut, with the original size recorded.
func TestRefusalsStoreABoundedRecord(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	h.ok("list") // creates the store
	before := storeBytes(t, h.dir)
	big := strings.Repeat("x", 100_000) // one argument stays under the kernel's 128 KiB
	argv := []string{"run", "--", "/bin/rm"}
	for i := 0; i < 10; i++ {
		argv = append(argv, big)
	}
	originalBytes := int64(len("/bin/rm") + 10*len(big))
	for i := 0; i < 10; i++ {
		r := h.bgcmd(argv...)
		require.Equal(t, exitRefused, r.code, r.stderr)
	}
	grown := storeBytes(t, h.dir) - before
	require.Less(t, grown, int64(1<<20), "ten refusals of 1 MB each grew the store by %d bytes", grown)

	rows := jsonLines(t, h.ok("--json", "sql",
		"SELECT argv, length(argv) + length(cwd) + length(message) AS kept, cut, argv_count, original_bytes FROM refusals"))
	require.Len(t, rows, 10)
	for _, r := range rows {
		require.LessOrEqual(t, r["kept"].(float64), float64(8<<10), "a refusal keeps a few KiB")
		require.Equal(t, 1.0, r["cut"], "the record says it was cut")
		require.Equal(t, 11.0, r["argv_count"])
		require.GreaterOrEqual(t, int64(r["original_bytes"].(float64)), originalBytes)
		var kept []string
		require.NoError(t, json.Unmarshal([]byte(r["argv"].(string)), &kept))
		require.Equal(t, "/bin/rm", kept[0], "argv[0] is kept whole")
	}
	require.Equal(t, "argv0,cut\n/bin/rm,1\n", h.ok("sql", "--csv", "SELECT DISTINCT argv0, cut FROM refusal_log"))
}

// TestPruneOlderThanPrunesRefusals: retention covers the refusals table.
func TestPruneOlderThanPrunesRefusals(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	for i := 0; i < 3; i++ {
		require.Equal(t, exitRefused, h.bgcmd("run", "--", "/bin/rm", "-rf", "/").code)
	}
	require.Equal(t, exitRefused, h.bgcmd("--session", "other", "run", "--", "/bin/rm", "x").code)
	count := func() string {
		return strings.TrimSpace(lastLine(h.ok("sql", "--csv", "SELECT count(*) FROM refusals")))
	}
	require.Equal(t, "4", count())

	require.Contains(t, h.ok("prune", "--older-than", "1h"), "0 refusal(s)", "recent refusals stay")
	require.Equal(t, "4", count())

	var dry map[string]any
	require.NoError(t, json.Unmarshal([]byte(h.ok("--json", "prune", "--older-than", "0s", "--session", "other", "--dry-run")), &dry))
	require.Equal(t, 1.0, dry["refusals"], "a dry run counts the session's refusals")
	require.Equal(t, "4", count(), "a dry run deletes nothing")

	require.Contains(t, h.ok("prune", "--older-than", "0s", "--session", "other"), "1 refusal(s)")
	require.Equal(t, "3", count())
	require.Contains(t, h.ok("prune", "--older-than", "0s"), strconv.Itoa(3)+" refusal(s)")
	require.Equal(t, "0", count())
}
