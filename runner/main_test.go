package runner_test

import (
	"os"
	"testing"

	"github.com/bgcmd/bgcmd/runner"
)

// TestMain lets this test binary serve as its own detached supervisor (the
// re-exec hook a Go host uses) and as a host process for crash tests.
func TestMain(m *testing.M) {
	maybeZombieLeader()
	os.Setenv(inheritedMarker, inheritedSecret)
	runner.MaybeSupervise()
	maybeHost()
	os.Exit(m.Run())
}

// An environment variable every test child inherits unless its environment
// is replaced; its value must never reach the database.
const (
	inheritedMarker = "BGCMD_TEST_INHERITED"
	inheritedSecret = "inherited-value-7f3a9c"
)
