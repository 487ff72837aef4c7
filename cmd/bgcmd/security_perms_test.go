package main

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/testkit"
)

// The test binary doubles as a tiny exec wrapper that is not a shell: run
// with these two variables set, it sets the umask and execs bgcmd, so that
// bgcmd and every process it starts (detached supervisors) inherit that
// umask while the tests' own umask never changes.
const (
	umaskEnv = "BGCMD_TEST_EXEC_UMASK"
	execEnv  = "BGCMD_TEST_EXEC"
)

func init() {
	mask, bin := os.Getenv(umaskEnv), os.Getenv(execEnv)
	if mask == "" || bin == "" {
		return
	}
	m, err := strconv.ParseUint(mask, 8, 32)
	if err != nil {
		fmt.Fprintln(os.Stderr, "bad", umaskEnv, err)
		os.Exit(2)
	}
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, umaskEnv+"=") && !strings.HasPrefix(kv, execEnv+"=") {
			env = append(env, kv)
		}
	}
	syscall.Umask(int(m))
	err = syscall.Exec(bin, append([]string{bin}, os.Args[1:]...), env)
	fmt.Fprintln(os.Stderr, "exec", bin, err)
	os.Exit(2)
}

// bgcmdUmask runs bgcmd as h.bgcmd does, but under umask mask: it runs
// the test binary, which sets the umask and execs bgcmd (see init).
func (h *home) bgcmdUmask(mask int, args ...string) result {
	h.t.Helper()
	self, err := os.Executable()
	require.NoError(h.t, err)
	env := append([]string{}, h.env...)
	for len(args) > 0 && strings.HasPrefix(args[0], "env:") {
		env = append(env, strings.TrimPrefix(args[0], "env:"))
		args = args[1:]
	}
	env = append(env, umaskEnv+"="+strconv.FormatInt(int64(mask), 8), execEnv+"="+binary)
	cmd := exec.Command(self, args...)
	cmd.Dir, cmd.Env = h.root, env
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	err = cmd.Run()
	res := result{stdout: out.String(), stderr: errb.String()}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		res.code = ee.ExitCode()
	} else {
		require.NoError(h.t, err)
	}
	return res
}

// requirePrivate fails unless every directory under dir (dir included) is
// 0700-or-less and every file 0600-or-less: nothing is open to the group
// or to others.
func requirePrivate(t *testing.T, dir string) {
	t.Helper()
	var open []string
	seen := 0
	require.NoError(t, filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		seen++
		if fi.Mode().Perm()&0o077 != 0 {
			open = append(open, fi.Mode().String()+" "+p)
		}
		return nil
	}))
	require.Greater(t, seen, 5, "the walk saw the home's files")
	require.Empty(t, open, "files and directories open to other users")
}

// TestHomeIsPrivateWhateverTheUmask is the exploit of a permissive umask:
// a home bgcmd creates, its database with the WAL and SHM, the job logs,
// the banked artifacts and every directory must be private to the owner
// even when bgcmd runs under umask 000.
func TestHomeIsPrivateWhateverTheUmask(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	fresh := filepath.Join(t.TempDir(), "state", "bgcmd")
	testkit.Cleanup(t, fresh)
	env := []string{"env:BGCMD_HOME=" + fresh, "env:BGCMD_POLICY=" + filepath.Join(h.dir, "policy.toml")}
	run := func(args ...string) result {
		t.Helper()
		r := h.bgcmdUmask(0, append(append([]string{}, env...), args...)...)
		require.Equal(t, 0, r.code, "bgcmd %v: stdout %q stderr %q", args, r.stdout, r.stderr)
		return r
	}
	// A settled job banks its output; a running one keeps logs in jobs/.
	id := strings.TrimSpace(run("run", "--", fixture(t, "print-bytes.sh"), "5000").stdout)
	run("wait", id)
	flag := filepath.Join(h.root, "go")
	running := strings.TrimSpace(run("run", "--", fixture(t, "wait-for-file.sh"), flag).stdout)
	t.Cleanup(func() { h.bgcmd(append(env, "kill", "--signal", "KILL", running)...) })
	run("sql", "SELECT count(*) FROM jobs")
	for _, f := range []string{"bgcmd.db", "bgcmd.db-wal", "bgcmd.db-shm"} {
		require.FileExists(t, filepath.Join(fresh, f))
	}
	requirePrivate(t, fresh)
	require.NoError(t, os.WriteFile(flag, nil, 0o600))
	run("wait", running)
	requirePrivate(t, fresh)
}

// TestHomeOpenToOthersIsTightenedOrRefused: a home made by `mkdir -p`
// (0755, ours) is tightened to 0700 and bgcmd says so; one that the group
// or others may write is refused with the chmod that fixes it; a database
// left readable by an older bgcmd is made private again.
func TestHomeOpenToOthersIsTightenedOrRefused(t *testing.T) {
	t.Parallel()
	h := newHome(t)

	require.NoError(t, os.Chmod(h.dir, 0o755))
	r := h.bgcmdUmask(0o022, "list")
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stderr, "0700")
	requireMode(t, h.dir, 0o700)
	requireMode(t, filepath.Join(h.dir, "bgcmd.db"), 0o600)
	r = h.bgcmd("list")
	require.Equal(t, 0, r.code)
	require.Empty(t, r.stderr, "a private home is not mentioned again")

	for _, mode := range []os.FileMode{0o777, 0o775, 0o757, 0o1777} {
		require.NoError(t, os.Chmod(h.dir, mode))
		for _, args := range [][]string{{"list"}, {"sql", "SELECT 1"}, {"run", "--", fixture(t, "exit-with.sh"), "0"}, {"mcp"}} {
			r := h.bgcmd(args...)
			require.Equal(t, exitRuntime, r.code, "mode %o, bgcmd %v: stdout %q stderr %q", mode, args, r.stdout, r.stderr)
			require.Contains(t, r.stderr, "chmod 700 "+h.dir, "mode %o, bgcmd %v", mode, args)
		}
	}
	require.NoError(t, os.Chmod(h.dir, 0o700))

	db := filepath.Join(h.dir, "bgcmd.db")
	require.NoError(t, os.Chmod(db, 0o644))
	h.ok("list")
	requireMode(t, db, 0o600)
}

// TestHomeOwnedByAnotherUserIsRefused: a home someone else owns could be
// swapped under bgcmd; it is refused. Needs root to give a directory away.
func TestHomeOwnedByAnotherUserIsRefused(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("only root can hand a directory to another user")
	}
	h := newHome(t)
	require.NoError(t, os.Chown(h.dir, 65534, 65534))
	t.Cleanup(func() { os.Chown(h.dir, 0, 0) })
	r := h.bgcmd("list")
	require.Equal(t, exitRuntime, r.code, "stdout %q stderr %q", r.stdout, r.stderr)
	require.Contains(t, r.stderr, "owned by uid 65534")
	require.Contains(t, r.stderr, h.dir)
}

func requireMode(t *testing.T, path string, want os.FileMode) {
	t.Helper()
	fi, err := os.Stat(path)
	require.NoError(t, err)
	require.Equal(t, want.String(), fi.Mode().Perm().String(), path)
}
