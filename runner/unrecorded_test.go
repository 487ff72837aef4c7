package runner_test

import (
	"context"
	"database/sql"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/runner"
)

// TestAStartWhoseRowCannotBeWrittenLeavesNothingRunning: when the job's row
// cannot be written (here a trigger refuses every new job, as a broken
// database would), Start fails with the database's reason and nothing of
// the job is left: no row, no directory and no process. In process the row
// is written only once the child runs (it carries the child's pid), so the
// child must be stopped at once; a detached start writes it first.
func TestAStartWhoseRowCannotBeWrittenLeavesNothingRunning(t *testing.T) {
	t.Parallel()
	for _, mode := range supervisionModes {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			e := newModeEnv(t, mode)
			script := fixture(t, "wait-for-file.sh")
			e.policy.AllowedExecutables = append(e.policy.AllowedExecutables, script)
			db, err := sql.Open("sqlite", filepath.Join(e.home, "bgcmd.db"))
			require.NoError(t, err)
			defer db.Close()
			_, err = db.Exec(`CREATE TRIGGER refuse_jobs BEFORE INSERT ON jobs
				BEGIN SELECT RAISE(ABORT, 'no new jobs here'); END`)
			require.NoError(t, err)

			// The reused mode's supervisor served a job first: that one
			// stays on record.
			before, err := e.store.List(context.Background(), jobstore.ListParams{})
			require.NoError(t, err)

			marker := t.Name() + "-" + mode
			o := runner.StartOptions{Env: map[string]string{"PATH": os.Getenv("PATH"), containMarker: marker}}
			j, err := e.r.Start(context.Background(), []string{script, filepath.Join(t.TempDir(), "never")}, o)
			require.Nil(t, j)
			require.ErrorContains(t, err, "no new jobs here")

			deadline := time.Now().Add(30 * time.Second)
			for len(marked(marker)) > 0 && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			require.Empty(t, marked(marker), "the command was stopped")
			res, err := e.store.List(context.Background(), jobstore.ListParams{})
			require.NoError(t, err)
			require.Equal(t, before.Jobs, res.Jobs, "the refused job has no row")
			entries, err := os.ReadDir(filepath.Join(e.home, "jobs"))
			require.NoError(t, err)
			require.Empty(t, entries, "no job directory is left")
		})
	}
}
