package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestStatusShowsWhatTheJobCost: a settled job's status carries its CPU
// time and peak memory, as an object in JSON and one line for people.
func TestStatusShowsWhatTheJobCost(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	r := h.bgcmd("--json", "run", "--wait", "--", fixture(t, "exit-with.sh"), "0")
	require.Equal(t, 0, r.code, r.stderr)
	var s map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &s))
	usage, ok := s["usage"].(map[string]any)
	require.True(t, ok, "usage is an object: %v", s["usage"])
	for _, k := range []string{"cpu_user_ms", "cpu_system_ms", "max_rss_kib"} {
		require.Contains(t, usage, k)
	}
	require.Positive(t, usage["max_rss_kib"], "a shell has a resident set")
	text := h.ok("status", s["id"].(string))
	var line string
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, "usage") {
			line = l
		}
	}
	require.Regexp(t, `^usage +cpu [0-9.]+s user \+ [0-9.]+s system, peak [0-9.]+ (KiB|MiB)$`, line, text)
}
