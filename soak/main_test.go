package soak

import (
	"os"
	"testing"
)

// TestMain lets the test binary serve as its own helper processes (see
// helperMain) and removes the bgcmd binary built for the run.
func TestMain(m *testing.M) {
	if helperMain() {
		return
	}
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}
