package main

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Each `bgcmd run` is a new process: the executable's sha256, computed by
// the first run of a tool, is kept in the home for the next, which is
// served from there (a digest planted there for the same file is what it
// records), so that a large tool is not read again at every start.
func TestRunKeepsTheExecutablesDigestForTheNextRun(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	h.ok("list") // migrated: the lean bgcmd runs the jobs itself
	tool := fixture(t, "exit-with.sh")
	data, err := os.ReadFile(tool)
	require.NoError(t, err)
	sum := sha256.Sum256(data)
	want := hex.EncodeToString(sum[:])

	id := h.start(tool, "0")
	require.Equal(t, 0, h.bgcmd("wait", id).code)
	require.Equal(t, want, h.status(id)["exe_sha256"])

	path := filepath.Join(h.dir, "exe-digests.json")
	var entries []map[string]any
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber() // the key's nanosecond times, exact
	require.NoError(t, dec.Decode(&entries))
	require.Len(t, entries, 1)
	require.Equal(t, tool, entries[0]["path"])
	require.Equal(t, want, entries[0]["sha256"])

	planted := strings.Repeat("f", 64)
	entries[0]["sha256"] = planted
	raw, err = json.Marshal(entries)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, raw, 0o600))
	id = h.start(tool, "0")
	require.Equal(t, 0, h.bgcmd("wait", id).code)
	require.Equal(t, planted, h.status(id)["exe_sha256"], "the second run is served from the home")
}
