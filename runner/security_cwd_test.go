package runner_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/policy"
	"github.com/bgcmd/bgcmd/runner"
)

// TestCwdSwappedForASymlinkDoesNotEscape: while jobs start in root/sub, an
// attacker swaps sub for a symlink to a directory outside the root and back
// again, as fast as it can. Every job that ran must have run inside the
// root: the directory that was checked is the one the child runs in.
func TestCwdSwappedForASymlinkDoesNotEscape(t *testing.T) {
	t.Parallel()
	for _, detached := range []bool{false, true} {
		t.Run(map[bool]string{false: "in-process", true: "detached"}[detached], func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, detached)
			printCwd := fixture(t, "print-cwd.sh")
			e.policy.AllowedExecutables = append(e.policy.AllowedExecutables, printCwd)
			root, err := filepath.EvalSymlinks(e.root)
			require.NoError(t, err)
			outside := t.TempDir()
			sub, link := filepath.Join(root, "sub"), filepath.Join(root, "sub.link")
			require.NoError(t, os.Mkdir(sub, 0o755))
			require.NoError(t, os.Symlink(outside, link))

			stop := make(chan struct{})
			var swaps atomic.Int64
			var wg sync.WaitGroup
			wg.Add(1)
			go func() {
				defer wg.Done()
				for {
					select {
					case <-stop:
						return
					default:
					}
					// sub is the directory, then the symlink out, then the
					// directory again: it always exists.
					if unix.Renameat2(unix.AT_FDCWD, sub, unix.AT_FDCWD, link, unix.RENAME_EXCHANGE) == nil {
						swaps.Add(1)
					}
					// Pacing, not synchronisation: each state holds a little
					// while, so that checks can pass on the directory.
					time.Sleep(100 * time.Microsecond)
				}
			}()

			// Start until enough jobs got past the policy (most starts are
			// refused: the check saw the symlink, or the open beneath the
			// root did).
			const enough, maxStarts = 20, 600
			var jobs []*bgcmd.Job
			starts, refused := 0, 0
			for ; starts < maxStarts && len(jobs) < enough; starts++ {
				j, err := e.r.Start(context.Background(), []string{printCwd}, runner.StartOptions{Cwd: "sub"})
				if _, ok := policy.IsRefusal(err); ok {
					refused++
					continue
				}
				if err != nil && !errors.Is(err, os.ErrNotExist) {
					require.NoError(t, err)
				}
				if j != nil {
					jobs = append(jobs, j)
				}
			}
			close(stop)
			wg.Wait()
			require.NotZero(t, swaps.Load(), "the attacker never swapped the directory")

			ran, escaped := 0, 0
			for _, j := range jobs {
				s := e.await(j.ID)
				if s.State != bgcmd.StateExited {
					continue // the directory was missing at the chdir: start_failed
				}
				ran++
				cwd := strings.TrimSpace(e.output(j.ID, bgcmd.Stdout))
				if cwd != root && !strings.HasPrefix(cwd, root+"/") {
					escaped++
					t.Errorf("job %s ran in %s, outside the root %s", j.ID, cwd, root)
				}
			}
			t.Logf("%d starts: %d ran, %d refused, %d escaped; %d swaps", starts, ran, refused, escaped, swaps.Load())
			require.NotZero(t, ran, "no job ran: the test proved nothing")
		})
	}
}

// TestRelativeExecutableRunsFromTheCheckedDirectory: an allowlisted
// "./name" runs the file of that name in the checked directory, in both
// modes, and the job records its absolute path.
func TestRelativeExecutableRunsFromTheCheckedDirectory(t *testing.T) {
	t.Parallel()
	for _, detached := range []bool{false, true} {
		t.Run(map[bool]string{false: "in-process", true: "detached"}[detached], func(t *testing.T) {
			t.Parallel()
			e := newEnv(t, detached)
			script, err := os.ReadFile(fixture(t, "print-cwd.sh"))
			require.NoError(t, err)
			require.NoError(t, os.Mkdir(filepath.Join(e.root, "sub"), 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(e.root, "sub", "print-cwd.sh"), script, 0o755))
			e.policy.AllowedExecutables = append(e.policy.AllowedExecutables, "./print-cwd.sh")
			j := e.start([]string{"./print-cwd.sh"}, runner.StartOptions{Cwd: "sub"})
			root, err := filepath.EvalSymlinks(e.root)
			require.NoError(t, err)
			require.Equal(t, filepath.Join(root, "sub", "print-cwd.sh"), j.Exe)
			require.Equal(t, filepath.Join(root, "sub"), j.Cwd)
			s := e.await(j.ID)
			require.Equal(t, bgcmd.StateExited, s.State, s.Error)
			require.Equal(t, filepath.Join(root, "sub")+"\n", e.output(j.ID, bgcmd.Stdout))
		})
	}
}
