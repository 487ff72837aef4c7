package runner_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/runner"
)

// TestDescendantWithAZombieLeaderEndsWithTheJob: a descendant leaves the
// job's session and ends its main thread alone while another thread runs
// on. /proc then shows it as a zombie (its thread group leader's state),
// yet it is alive: it must still be killed and reaped by the time the job
// settles, within the job's bound, on a normal exit, a kill and a timeout,
// in both supervision modes.
func TestDescendantWithAZombieLeaderEndsWithTheJob(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"in-process", "detached"} {
		for _, ending := range []string{"exit", "kill", "timeout"} {
			t.Run(mode+" "+ending, func(t *testing.T) {
				t.Parallel()
				e := newModeEnv(t, mode)
				script := fixture(t, "zombie-leader.sh")
				e.policy.AllowedExecutables = append(e.policy.AllowedExecutables, script)
				gofile := filepath.Join(e.root, "go")
				o := runner.StartOptions{Env: map[string]string{"PATH": "/usr/bin:/bin", "ZOMBIE_LEADER": os.Args[0]}}
				if ending == "timeout" {
					o.Timeout = 3 * time.Second
				}
				j := e.start([]string{script, gofile}, o)
				require.Equal(t, bgcmd.StateRunning, j.State, j.Error)
				killStray(t, j.PID)
				leader := 0
				waitFor(t, "the descendant's leader to exit alone", func() bool {
					s, err := e.r.Status(context.Background(), j.ID)
					if err == nil && s.State.Settled() {
						return true
					}
					_, err = fmt.Sscanf(e.liveStdout(j.ID), "leader %d", &leader)
					return err == nil
				})
				if leader == 0 {
					t.Skipf("the job settled before its descendant was ready (%s timeout on a loaded machine)", o.Timeout)
				}
				t.Cleanup(func() {
					if hasLiveThread(leader) {
						_ = syscall.Kill(leader, syscall.SIGKILL) // a signal to a zombie leader's pid reaches its threads
					}
				})
				require.True(t, hasLiveThread(leader), "the descendant %d is not running behind its zombie leader", leader)
				switch ending {
				case "exit":
					require.NoError(t, os.WriteFile(gofile, nil, 0o600))
				case "kill":
					_, err := e.r.Kill(context.Background(), j.ID, syscall.SIGTERM)
					require.NoError(t, err)
				}
				// Timeout 3s, kill grace 2s: 30s is far past every bound.
				s, err := e.r.Await(context.Background(), j.ID, 30*time.Second)
				require.NoError(t, err)
				require.True(t, s.State.Settled(),
					"a descendant with a zombie leader held the job open: still %s after 30s", s.State)
				require.False(t, present(leader),
					"the descendant %d outlived its settled job (%s) behind a zombie leader", leader, s.State)
				want := map[string]bgcmd.State{"exit": bgcmd.StateExited, "kill": bgcmd.StateKilled, "timeout": bgcmd.StateTimeout}[ending]
				require.Equal(t, want, s.State, s.Error)
			})
		}
	}
}

// hasLiveThread reports whether a thread of pid is alive (not a zombie),
// whatever its thread group leader's state.
func hasLiveThread(pid int) bool {
	tasks, err := filepath.Glob(filepath.Join("/proc", strconv.Itoa(pid), "task", "*", "stat"))
	if err != nil {
		return false
	}
	for _, task := range tasks {
		b, err := os.ReadFile(task)
		if err != nil {
			continue
		}
		st := string(b)
		if i := strings.LastIndexByte(st, ')'); i > 0 && len(st) > i+2 && st[i+2] != 'Z' && st[i+2] != 'X' {
			return true
		}
	}
	return false
}

// TestMainProcessWithAZombieLeaderIsBounded: the job's main process ends
// its main thread alone while another thread runs on. The job still runs,
// and its timeout must end it: the job settles as timed out, with nothing
// of it left.
func TestMainProcessWithAZombieLeaderIsBounded(t *testing.T) {
	t.Parallel()
	for _, mode := range []string{"in-process", "detached"} {
		t.Run(mode, func(t *testing.T) {
			t.Parallel()
			e := newModeEnv(t, mode)
			e.policy.AllowedExecutables = append(e.policy.AllowedExecutables, os.Args[0])
			j := e.start([]string{os.Args[0]}, runner.StartOptions{
				Env: map[string]string{zombieLeaderVar: "-"}, Timeout: 2 * time.Second})
			require.Equal(t, bgcmd.StateRunning, j.State, j.Error)
			t.Cleanup(func() {
				if hasLiveThread(j.PID) {
					_ = syscall.Kill(j.PID, syscall.SIGKILL)
				}
			})
			// Timeout 2s, kill grace 2s: 30s is far past the bound.
			s, err := e.r.Await(context.Background(), j.ID, 30*time.Second)
			require.NoError(t, err)
			require.True(t, s.State.Settled(), "a main process with a zombie leader outlived its timeout: still %s after 30s", s.State)
			require.Equal(t, bgcmd.StateTimeout, s.State, s.Error)
			require.Equal(t, fmt.Sprintf("leader %d\n", j.PID), e.output(j.ID, bgcmd.Stdout))
			require.False(t, present(j.PID), "the main process outlived its settled job")
		})
	}
}

// zombieLeaderVar, set, makes this test binary a process whose thread
// group leader ends its own thread alone (see maybeZombieLeader); its value
// is the file to write the pid to, or "-" for stdout.
const zombieLeaderVar = "BGCMD_TEST_ZOMBIE_LEADER"

func init() {
	if os.Getenv(zombieLeaderVar) != "" {
		runtime.LockOSThread() // main then runs on the thread group leader
	}
}

// maybeZombieLeader, under zombieLeaderVar, keeps a thread sleeping, says
// its pid ("leader PID" on stdout, or the pid alone in the named file,
// written whole by a rename) and ends its main thread with exit(2), not
// exit_group(2): the process runs on while /proc shows it as a zombie.
func maybeZombieLeader() {
	to := os.Getenv(zombieLeaderVar)
	if to == "" {
		return
	}
	asleep := make(chan struct{})
	go func() {
		runtime.LockOSThread() // another thread than main's
		close(asleep)
		time.Sleep(1000 * time.Second)
		os.Exit(0)
	}()
	<-asleep
	if to == "-" {
		fmt.Printf("leader %d\n", os.Getpid())
	} else if os.WriteFile(to+".tmp", []byte(strconv.Itoa(os.Getpid())+"\n"), 0o600) != nil || os.Rename(to+".tmp", to) != nil {
		os.Exit(2)
	}
	_, _, _ = syscall.Syscall(unix.SYS_EXIT, 0, 0, 0) // this thread only
}
