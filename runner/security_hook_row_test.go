package runner_test

import (
	"context"
	"database/sql"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/internal/jobstore"
	"github.com/bgcmd/bgcmd/runner"
)

// TestAHookRowThatIsNotThePolicysHookIsNeverRun: a job's hook travels in
// its row, and whoever settled the job had run whatever the row named.
// Anyone who can write the store (another host of a shared one, or a job
// that reaches the database) rewrote a running job's hook row to a shell
// of its own, or gave a job of a policy without a hook one, and the
// settle ran it outside every allowlist. Each forged row is now recorded
// as not started, saying why, and its program never runs; the policy's
// own hook still runs as it is.
func TestAHookRowThatIsNotThePolicysHookIsNeverRun(t *testing.T) {
	t.Parallel()
	for _, detached := range []bool{false, true} {
		for _, policyHook := range []bool{true, false} {
			name := map[bool]string{false: "in process", true: "detached"}[detached] +
				map[bool]string{true: ", a forged hook", false: ", a hook the policy never named"}[policyHook]
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				e, log, _ := hookEnv(t, detached, "0")
				if !policyHook {
					e.policy.OnSettle = nil
				}
				gate := filepath.Join(t.TempDir(), "gate")
				j := e.start([]string{fixture(t, "wait-for-file.sh"), gate, "0"}, runner.StartOptions{})
				require.Equal(t, bgcmd.StateRunning, j.State)

				mark := filepath.Join(t.TempDir(), "forged-hook-ran")
				forged, _ := json.Marshal([]string{"/bin/sh", "-c", "echo pwned > " + mark})
				db, err := sql.Open("sqlite", "file:"+filepath.Join(e.home, "bgcmd.db")+"?_pragma=busy_timeout(10000)")
				require.NoError(t, err)
				defer db.Close()
				if policyHook {
					res, err := db.Exec(`UPDATE hook_runs SET argv = ? WHERE job_id = ?`, string(forged), j.ID)
					require.NoError(t, err)
					n, err := res.RowsAffected()
					require.NoError(t, err)
					require.EqualValues(t, 1, n, "the job has the policy's hook row")
				} else {
					_, err := db.Exec(`INSERT INTO hook_runs (job_id, argv, search_path, timeout_ms) VALUES (?, ?, '/usr/bin:/bin', 10000)`,
						j.ID, string(forged))
					require.NoError(t, err)
				}

				require.NoError(t, os.WriteFile(gate, nil, 0o600))
				e.await(j.ID)
				if !policyHook {
					// A job stored without a hook is settled without a look
					// for one; a row added since is left unclaimed, for a
					// reconcile to find once its settler is gone.
					if detached {
						// Once its settler is gone, one reconcile hands the
						// hook to one supervisor. Reconciles in a loop each
						// started another until the first had claimed it, and
						// one of those still opening the store could outlive
						// the test and write into its home as it was removed.
						rec, err := e.store.Get(context.Background(), j.ID)
						require.NoError(t, err)
						waitFor(t, "the job's supervisor to exit", func() bool { return !processAlive(rec.SupervisorPID) })
						_, err = e.r.Reconcile(context.Background())
						require.NoError(t, err)
					} else {
						_, err := e.r.Reconcile(context.Background())
						require.NoError(t, err)
						h, err := e.store.SettleHookRun(context.Background(), j.ID)
						require.NoError(t, err)
						require.Nil(t, h.ClaimedAt, "the settler, this process, is alive: nobody runs its hooks")
						require.NoFileExists(t, mark, "the forged hook ran")
						return
					}
				}
				h := hookRun(t, e.store, j.ID)
				require.Equal(t, jobstore.HookStartFailed, h.Outcome)
				require.Contains(t, h.Error, "it was not run")
				require.NoFileExists(t, mark, "the forged hook ran")
				require.NoFileExists(t, log, "the policy's hook ran with the forged row's claim")
			})
		}
	}
}
