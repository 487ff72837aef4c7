package jobstore_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
)

// A process of this test binary started with stepEnv set does one step of
// a short command's life on the store at stepDBEnv and exits (TestMain).
const (
	stepEnv   = "BGCMD_JOBSTORE_STEP"
	stepDBEnv = "BGCMD_JOBSTORE_STEP_DB"
	stepIDEnv = "BGCMD_JOBSTORE_STEP_ID"
)

// runStep does the step named by stepEnv, as the CLI and a detached
// supervisor do it:
//   - "create" opens the store with its read pool, creates a job, prints its
//     id and exits without closing the store (a CLI command leaves its
//     connections to the end of the process);
//   - "settle" opens the store on one connection, settles the job
//     stepIDEnv names and closes the store (a supervisor);
//   - "announce" announces a job's create as a detached supervisor does,
//     and writes its row when told to (announceStep).
func runStep(step string) error {
	ctx := context.Background()
	path := os.Getenv(stepDBEnv)
	switch step {
	case "create":
		s, err := jobstore.Open(ctx, jobstore.Options{Path: path, Host: "test-host"})
		if err != nil {
			return err
		}
		j := &bgcmd.Job{Session: "steps", Argv: []string{"/bin/true"}, Exe: "/bin/true", Cwd: "/"}
		if err := s.Create(ctx, j); err != nil {
			return err
		}
		fmt.Println(j.ID)
		return nil
	case "settle":
		s, err := jobstore.Open(ctx, jobstore.Options{Path: path, Host: "test-host", OneConnection: true})
		if err != nil {
			return err
		}
		code := 0
		if _, err := s.Settle(ctx, jobstore.SettleParams{ID: os.Getenv(stepIDEnv), To: bgcmd.StateExited, ExitCode: &code}); err != nil {
			s.Close()
			return err
		}
		return s.Close()
	case "announce":
		return announceStep(ctx, path)
	}
	return fmt.Errorf("unknown step %q", step)
}

// step runs one step in a process of its own and returns what it printed.
func step(t *testing.T, path, name, id string) string {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), stepEnv+"="+name, stepDBEnv+"="+path, stepIDEnv+"="+id,
		// Under the race detector a process waits a second at its exit.
		"GORACE="+strings.TrimSpace(os.Getenv("GORACE")+" atexit_sleep_ms=0"))
	out, err := cmd.Output()
	var stderr string
	if ee := (*exec.ExitError)(nil); errors.As(err, &ee) {
		stderr = string(ee.Stderr)
	}
	require.NoError(t, err, "step %s: %s", name, stderr)
	return strings.TrimSpace(string(out))
}

// TestShortProcessesKeepTheLogBounded: short commands one after another,
// each a process that creates a job and exits without closing the store,
// then a supervisor's process that settles it and closes the store last,
// keep the write-ahead log bounded. The next process to open the store
// rebuilds the log's index from its frames and cannot know which were
// copied already, so the log started again only after a checkpoint
// followed by a write in the same life of the index: without one, every
// command appended to it for good, and every open read all of it.
func TestShortProcessesKeepTheLogBounded(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "bgcmd.db")
	const bound = 1 << 20 // 1 MiB: about 20 commands' writes
	for i := range 30 {
		id := step(t, path, "create", "")
		step(t, path, "settle", id)
		fi, err := os.Stat(path + "-wal")
		require.NoError(t, err)
		require.Less(t, fi.Size(), int64(bound), "after command %d the log still holds every command's writes", i)
	}
}
