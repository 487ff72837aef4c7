package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/stretchr/testify/require"
)

// `bgcmd gc` keeps the bundles under <home>/exports unless told an age,
// then removes only those older than it, saying so; a bad age is a usage
// error that names the flag.
func TestGCRemovesOldExportsOnlyWhenToldAnAge(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	id := h.start(fixture(t, "exit-with.sh"), "0")
	h.ok("wait", id)
	exports := filepath.Join(h.dir, "exports")
	require.NoError(t, os.MkdirAll(exports, 0o700))
	old := filepath.Join(exports, uuid.NewString()+".tar.gz")
	fresh := filepath.Join(exports, uuid.NewString()+".tar.gz")
	h.ok("export", id, "-o", old)
	h.ok("export", id, "-o", fresh)
	monthAgo := time.Now().Add(-30 * 24 * time.Hour)
	require.NoError(t, os.Chtimes(old, monthAgo, monthAgo))

	out := h.ok("gc", "--min-age", "0s")
	require.NotContains(t, out, "export")
	require.FileExists(t, old)

	for _, bad := range []string{"0s", "3", "-1h"} {
		r := h.bgcmd("gc", "--exports-older-than", bad)
		require.Equal(t, 2, r.code, r.stderr)
		require.Contains(t, r.stderr, "--exports-older-than", bad)
	}

	var rep struct {
		Exports []struct{ Path string } `json:"exports"`
	}
	require.NoError(t, json.Unmarshal([]byte(h.ok("--json", "gc", "--min-age", "0s", "--exports-older-than", "720h", "--dry-run")), &rep))
	require.Len(t, rep.Exports, 1)
	require.Equal(t, old, rep.Exports[0].Path)
	require.FileExists(t, old)

	out = h.ok("gc", "--min-age", "0s", "--exports-older-than", "720h")
	require.Contains(t, out, "removed "+old)
	require.Contains(t, out, "a bundle command_export wrote more than 720h0m0s ago")
	require.Contains(t, out, "1 export file(s)")
	require.NoFileExists(t, old)
	require.FileExists(t, fresh)
	h.ok("verify", "--bundle", fresh)
}
