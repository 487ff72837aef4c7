package policy_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/policy"
)

func TestParseQueueLimits(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	p, err := policy.Parse("q.toml", []byte("cwd_root = \""+root+"\"\nmax_running = 3\n\n[groups.tests]\nmax_running = 2\n\n[groups.lint]\nmax_running = 0\n"))
	require.NoError(t, err)
	require.Equal(t, 3, p.MaxRunning)
	require.Equal(t, policy.StandardMaxQueued, p.QueueBound(), "max_queued left out")
	q, err := policy.Parse("q.toml", []byte("cwd_root = \""+root+"\"\nmax_queued = 7\n"))
	require.NoError(t, err)
	require.Equal(t, 7, q.QueueBound())
	require.Equal(t, map[string]policy.Group{"tests": {MaxRunning: 2}, "lint": {MaxRunning: 0}}, p.Groups)
	require.NoError(t, policy.CheckGroup(p, "tests"))
	require.NoError(t, policy.CheckGroup(p, ""))
	err = policy.CheckGroup(p, "nope")
	var ref *policy.Refusal
	require.True(t, errors.As(err, &ref))
	require.Equal(t, policy.CodeUnknownGroup, ref.Code)
	require.Contains(t, ref.Message, "known groups: lint, tests")
}

func TestParseQueueLimitErrorsNameFileLineKey(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	for _, tt := range []struct{ text, key, msg string }{
		{"max_running = -1\n", "max_running", "use 0 (no limit)"},
		{"max_running = \"2\"\n", "max_running", "must be an integer"},
		{"[groups.tests]\nmax_running = 1.5\n", "groups", "groups.tests.max_running must be an integer"},
		{"[groups.tests]\nmax_runing = 1\n", "groups", `unknown key "max_runing"`},
		{"groups = 3\n", "groups", "must be tables"},
		{"max_queued = 0\n", "max_queued", "use 1 up to"},
		{"max_queued = -5\n", "max_queued", "use 1 up to"},
		{"max_queued = \"9\"\n", "max_queued", "must be an integer"},
	} {
		_, err := policy.Parse("q.toml", []byte("cwd_root = \""+root+"\"\n"+tt.text))
		var le *policy.LoadError
		require.True(t, errors.As(err, &le), tt.text)
		require.Equal(t, tt.key, le.Key, tt.text)
		require.Equal(t, 2, le.Line, tt.text)
		require.Contains(t, le.Error(), "q.toml:2: key "+tt.key+": ", tt.text)
		require.Contains(t, le.Error(), tt.msg, tt.text)
	}
}
