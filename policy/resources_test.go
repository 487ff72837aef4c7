package policy_test

import (
	"bufio"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/policy"
)

// testCgroup creates a cgroup v2 directory below this process's own cgroup
// and returns it, or skips the test saying why the machine has none.
func testCgroup(t *testing.T) string {
	t.Helper()
	mounts, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		t.Skipf("no cgroup to test with: %v", err)
	}
	var mount string
	sc := bufio.NewScanner(strings.NewReader(string(mounts)))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if i := slices.Index(f, "-"); i > 0 && i+1 < len(f) && f[i+1] == "cgroup2" {
			mount = f[4]
		}
	}
	if mount == "" {
		t.Skip("no cgroup to test with: no cgroup2 file system is mounted")
	}
	own, err := os.ReadFile("/proc/self/cgroup")
	if err != nil {
		t.Skipf("no cgroup to test with: %v", err)
	}
	path := "/"
	for _, l := range strings.Split(string(own), "\n") {
		if p, ok := strings.CutPrefix(l, "0::"); ok {
			path = p
		}
	}
	dir := filepath.Join(mount, path, fmt.Sprintf("bgcmd-policy-test-%d-%s", os.Getpid(), strings.ReplaceAll(t.Name(), "/", "_")))
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Skipf("no cgroup to test with: cannot create one under %s: %v", filepath.Join(mount, path), err)
	}
	t.Cleanup(func() {
		if err := os.Remove(dir); err != nil && !errors.Is(err, os.ErrNotExist) {
			t.Errorf("remove test cgroup %s: %v", dir, err)
		}
	})
	return dir
}

// loadError writes body as a policy file, loads it and returns the
// *LoadError, which must name the file, key and line.
func loadError(t *testing.T, body, key string, line int) *policy.LoadError {
	t.Helper()
	s := newSandbox(t)
	path := filepath.Join(s.tmp, "policy.toml")
	require.NoError(t, os.WriteFile(path, []byte(body), 0o644))
	p, err := policy.Load(path)
	require.Nil(t, p)
	var le *policy.LoadError
	require.ErrorAs(t, err, &le)
	require.Equal(t, path, le.File)
	require.Equal(t, key, le.Key, "%v", err)
	require.Equal(t, line, le.Line, "%v", err)
	require.True(t, strings.HasPrefix(err.Error(), path+":"+strconv.Itoa(line)+": key "+key+": "), err.Error())
	return le
}

// TestResourceKeysWithoutACgroupAreRefused: max_memory and max_processes
// that no cgroup can enforce refuse the whole policy, naming the key, the
// file and the two ways out; they are never silently ignored.
func TestResourceKeysWithoutACgroupAreRefused(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"max_memory = '512MiB'", "max_processes = 200"} {
		name, _, _ := strings.Cut(key, " ")
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			le := loadError(t, "cwd_root = 'root'\n"+key+"\n", name, 2)
			require.Contains(t, le.Message, "needs a cgroup to be enforced")
			require.Contains(t, le.Message, `set cgroup = "/sys/fs/cgroup/`)
			require.Contains(t, le.Message, "or remove "+name)
		})
	}
}

// TestResourceKeysNeedTheirController: with a cgroup whose memory or pids
// controller is not available, the key is refused naming the controller;
// where it is available, the policy loads with the limit.
func TestResourceKeysNeedTheirController(t *testing.T) {
	t.Parallel()
	for _, k := range []struct {
		body, key, controller string
	}{{"max_memory = '512MiB'", "max_memory", "memory"}, {"max_processes = 200", "max_processes", "pids"}} {
		t.Run(k.key, func(t *testing.T) {
			t.Parallel()
			cg := testCgroup(t)
			s := newSandbox(t)
			path := filepath.Join(s.tmp, "policy.toml")
			require.NoError(t, os.WriteFile(path, []byte("cwd_root = 'root'\ncgroup = '"+cg+"'\n"+k.body+"\n"), 0o644))
			p, err := policy.Load(path)
			controllers, rerr := os.ReadFile(filepath.Join(cg, "cgroup.controllers"))
			require.NoError(t, rerr)
			if slices.Contains(strings.Fields(string(controllers)), k.controller) {
				require.NoError(t, err)
				if k.controller == "memory" {
					require.Equal(t, int64(512<<20), p.MaxMemory)
				} else {
					require.Equal(t, 200, p.MaxProcesses)
				}
				return
			}
			t.Logf("the %s controller is not available in %s here (cgroup.controllers: %q): the refusal is tested", k.controller, cg, strings.TrimSpace(string(controllers)))
			var le *policy.LoadError
			require.ErrorAs(t, err, &le)
			require.Equal(t, k.key, le.Key)
			require.Equal(t, 3, le.Line)
			require.Contains(t, le.Message, "the "+k.controller+" controller is not available in cgroup "+cg)
			require.Contains(t, le.Message, "or remove "+k.key)
		})
	}
}

// TestResourceKeysRefuseGarbage: a size or a count that is not one names
// the key, its line and the file.
func TestResourceKeysRefuseGarbage(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct{ body, key, msg string }{
		{"max_memory = 'lots'", "max_memory", `"lots" is not a size`},
		{"max_memory = '512 parsecs'", "max_memory", "is not a size"},
		{"max_memory = '0.5'", "max_memory", "not a whole number of bytes"},
		{"max_memory = '0'", "max_memory", "not a whole number of bytes of at least 1"},
		{"max_memory = -5", "max_memory", "must be positive"},
		{"max_memory = true", "max_memory", "must be a size"},
		{"max_processes = 'many'", "max_processes", "must be an integer number of processes, not a string"},
		{"max_processes = 0", "max_processes", "use 1 up to"},
		{"max_processes = 99999999", "max_processes", "use 1 up to"},
	} {
		t.Run(tt.body, func(t *testing.T) {
			t.Parallel()
			le := loadError(t, "cwd_root = 'root'\n"+tt.body+"\n", tt.key, 2)
			require.Contains(t, le.Message, tt.msg)
		})
	}
}

func TestParseSize(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{
		"536870912": 536870912, "512MiB": 512 << 20, "2GiB": 2 << 30, "2G": 2 << 30, "1.5g": 3 << 29,
		"64k": 64 << 10, "20MB": 20e6, " 7 B ": 7,
	} {
		got, err := policy.ParseSize(in)
		require.NoError(t, err, in)
		require.Equal(t, want, got, in)
	}
	for _, in := range []string{"", "MiB", "-1", "1.5", "1e9", "12 furlongs", "0x10", "9999999999TiB"} {
		_, err := policy.ParseSize(in)
		require.Error(t, err, in)
	}
	require.Equal(t, "512MiB", policy.FormatSize(512<<20))
	require.Equal(t, "1000 bytes", policy.FormatSize(1000))
}

// TestPerStartResourceLimits: a per-start memory limit or process bound
// replaces the policy's and may not exceed it; under a policy without a
// cgroup any is refused, naming the file to change.
func TestPerStartResourceLimits(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	limited := s.policy("/usr/bin/git")
	limited.File, limited.Cgroup = "/etc/bgcmd/policy.toml", t.TempDir() // Check never touches the cgroup
	limited.MaxMemory, limited.MaxProcesses = 1<<30, 100
	open := s.policy("/usr/bin/git")
	open.Cgroup = t.TempDir()
	none := s.policy("/usr/bin/git")
	none.File = "/etc/bgcmd/policy.toml"

	tests := []struct {
		name      string
		p         *policy.Policy
		mem       int64
		procs     int
		wantMem   int64
		wantProcs int
		msg, hint string // "" means allowed
	}{
		{"Without per-start values the policy's apply.", limited, 0, 0, 1 << 30, 100, "", ""},
		{"A lower memory limit replaces the policy's.", limited, 512 << 20, 0, 512 << 20, 100, "", ""},
		{"A limit at the ceiling is allowed.", limited, 1 << 30, 100, 1 << 30, 100, "", ""},
		{"A memory limit above the ceiling is refused, not clamped.", limited, 2 << 30, 0, 0, 0,
			"max memory 2GiB is above the policy's ceiling of 1GiB (max_memory)", "raises max_memory in /etc/bgcmd/policy.toml"},
		{"A process bound above the ceiling is refused.", limited, 0, 101, 0, 0,
			"max processes 101 processes is above the policy's ceiling of 100 processes (max_processes)", "raises max_processes in /etc/bgcmd/policy.toml"},
		{"A negative limit is refused.", limited, -1, 0, 0, 0, "negative", ""},
		{"With a cgroup and no ceiling any limit may be set.", open, 8 << 30, 5000, 8 << 30, 5000, "", ""},
		{"A process bound above the kernel's is refused.", open, 0, policy.MaxProcessesCeiling + 1, 0, 0, "above the kernel's bound", ""},
		{"Without a cgroup a memory limit is refused.", none, 512 << 20, 0, 0, 0,
			"max memory 512MiB cannot be enforced: the policy has no cgroup", "sets cgroup = \"/sys/fs/cgroup/…\" (a delegated cgroup v2 directory) in /etc/bgcmd/policy.toml"},
		{"Without a cgroup a process bound is refused.", none, 0, 200, 0, 0,
			"max processes 200 processes cannot be enforced", "leave --max-processes out"},
		{"Without a cgroup and without limits a start is allowed.", none, 0, 0, 0, 0, "", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			d, err := tt.p.Check(policy.Request{Argv: []string{"/usr/bin/git"}, MaxMemory: tt.mem, MaxProcesses: tt.procs})
			if tt.msg == "" {
				require.NoError(t, err)
				require.Equal(t, tt.wantMem, d.MaxMemory)
				require.Equal(t, tt.wantProcs, d.MaxProcesses)
				require.NoError(t, d.Close())
				return
			}
			require.Nil(t, d)
			r := requireRefused(t, err, policy.CodeOverLimit)
			require.Contains(t, r.Message, tt.msg)
			require.Contains(t, r.Hint, tt.hint)
		})
	}
}

// TestACodePolicyWithLimitsNeedsACgroup: a policy built in code with a
// limit and no cgroup is unusable, so every start is refused.
func TestACodePolicyWithLimitsNeedsACgroup(t *testing.T) {
	t.Parallel()
	s := newSandbox(t)
	p := s.policy("/usr/bin/git")
	p.MaxMemory = 1 << 30
	require.ErrorContains(t, p.Validate(), "max_memory: needs a cgroup")
	_, err := p.Check(policy.Request{Argv: []string{"/usr/bin/git"}})
	requireRefused(t, err, policy.CodeBadPolicy)
	p.MaxMemory, p.MaxProcesses = 0, 10
	require.ErrorContains(t, p.Validate(), "max_processes: needs a cgroup")
}
