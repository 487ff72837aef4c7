package runner_test

import (
	"context"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/runner"
)

// TestRelayedTextCarriesNoControlCharacters: what a detached supervisor
// writes in its start report or its log reaches the job's error (and so a
// terminal) without escape sequences or other control characters.
func TestRelayedTextCarriesNoControlCharacters(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ supervisor, want string }{
		{"fake-supervisor.sh", "red line"},             // its start report; a tab becomes a space
		{"fake-supervisor-silent.sh", "line one line"}, // its log; a newline becomes a space
	} {
		t.Run(tt.supervisor, func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, false)
			r, err := runner.New(context.Background(), runner.Options{Store: e.store, Home: e.home, Policy: e.policy,
				Detached: true, Binary: fixture(t, tt.supervisor)})
			require.NoError(t, err)
			t.Cleanup(func() { r.Close(context.Background()) })
			j, err := r.Start(context.Background(), []string{fixture(t, "exit-with.sh"), "0"}, runner.StartOptions{})
			require.Error(t, err)
			require.NotNil(t, j)
			require.Equal(t, bgcmd.StateStartFailed, j.State)
			for _, text := range []string{err.Error(), j.Error} {
				require.Contains(t, text, tt.want)
				require.False(t, strings.ContainsFunc(text, unicode.IsControl), "control characters relayed: %q", text)
			}
		})
	}
}
