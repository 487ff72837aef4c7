package runner

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// TestARunnerAsksBackAtMostMaxReturningSupervisors: a runner keeping
// spares asks a job's supervisor back while fewer than maxReturning are
// out; a place comes free when a start ends without one, and a closed
// runner, or one without spares, asks none back.
func TestARunnerAsksBackAtMostMaxReturningSupervisors(t *testing.T) {
	r := &Runner{keepSpare: true}
	for i := range maxReturning {
		require.True(t, r.reserveReturn(), "place %d", i)
	}
	require.False(t, r.reserveReturn(), "past maxReturning")
	r.releaseReturn(true, nil)
	require.True(t, r.reserveReturn(), "a place came free")
	require.False(t, r.reserveReturn())
	r.releaseReturn(false, nil) // no reservation: frees nothing
	require.False(t, r.reserveReturn())

	r = &Runner{keepSpare: true, closed: true}
	require.False(t, r.reserveReturn(), "closed")
	require.False(t, (&Runner{}).reserveReturn(), "no spares")
}
