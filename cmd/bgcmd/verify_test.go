package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestVerifyReportsCorruptAndMissingArtifacts(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	id := h.start(fixture(t, "exit-with.sh"), "0")
	require.Equal(t, 0, h.bgcmd("wait", id).code)

	ok := h.bgcmd("verify", id)
	require.Equal(t, 0, ok.code, ok.stderr)
	require.Equal(t, 2, strings.Count(ok.stdout, " ok\n"), ok.stdout)

	s := h.status(id)
	stdout := s["stdout"].(map[string]any)
	sha := stdout["sha256"].(string)
	path := filepath.Join(h.dir, "artifacts", sha[:2], sha)
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data[0] ^= 0xff
	require.NoError(t, os.WriteFile(path, data, 0o600))

	bad := h.bgcmd("--json", "verify", id)
	require.Equal(t, 1, bad.code, "a corrupted artifact fails verification")
	require.Contains(t, bad.stderr, "1 of 2 banked stream(s) failed verification")
	var checks []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(bad.stdout), "\n") {
		var c map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &c))
		checks = append(checks, c)
	}
	require.Len(t, checks, 2)
	require.Equal(t, "stdout", checks[0]["stream"])
	require.Equal(t, false, checks[0]["ok"])
	require.Contains(t, checks[0]["problem"], "corrupt")
	require.Contains(t, checks[0]["problem"], path)
	require.Equal(t, true, checks[1]["ok"])

	require.NoError(t, os.Remove(path))
	gone := h.bgcmd("verify", id)
	require.Equal(t, 1, gone.code)
	require.Contains(t, gone.stdout, "missing")

	unknown := h.bgcmd("verify", "01a00000-0000-7000-8000-000000000000")
	require.Equal(t, 4, unknown.code)
}
