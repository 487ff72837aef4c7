package runner_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/runner"
)

// TestAwaitOfAnInProcessJobReportsWhatTheStoreHolds: Await of a job
// supervised in this process reports the row its settle wrote rather than
// reading it back; that report must be the one a later Status reads from
// the store (state, exit code, artifacts, preview, counters), and leave the
// job unread.
func TestAwaitOfAnInProcessJobReportsWhatTheStoreHolds(t *testing.T) {
	t.Parallel()
	e := newEnv(t, false)
	ctx := context.Background()
	for _, code := range []string{"0", "3"} {
		j := e.start([]string{fixture(t, "exit-with.sh"), code}, runner.StartOptions{})
		got, err := e.r.Await(ctx, j.ID, time.Minute)
		require.NoError(t, err)
		want, err := e.r.Status(ctx, j.ID)
		require.NoError(t, err)
		require.True(t, got.State.Settled())
		got.DurationMS, want.DurationMS = 0, 0
		require.Equal(t, want, got)
		require.NotEmpty(t, got.Stdout.ArtifactID)
		require.NotEmpty(t, got.Stderr.ArtifactID)
		require.Contains(t, got.TailPreview, "out: exiting with "+code)
		require.Equal(t, 1, got.Counters.Finished, "Await marks nothing read")
		_, err = e.r.Read(ctx, j.ID)
		require.NoError(t, err)
	}
}
