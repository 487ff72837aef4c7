package main

import (
	"encoding/base64"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRunThenStatusOutputAndWait(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	id := h.start(fixture(t, "slow-lines.sh"), "3", "0.05")

	s := h.status(id)
	require.Contains(t, []any{"running", "exited"}, s["state"])
	require.Equal(t, h.root, s["cwd"], "run without --cwd uses the current directory")

	w := h.bgcmd("wait", id)
	require.Equal(t, 0, w.code, w.stderr)
	require.Contains(t, w.stdout, "exited 0")
	require.Empty(t, w.stderr, "nothing extra when stderr is not a terminal")

	require.Equal(t, "line 1\nline 2\nline 3\ndone\n", h.ok("output", id))
	require.Equal(t, "line 2\n", h.ok("output", id, "--unit", "lines", "--offset", "1", "--limit", "1"))
	require.Equal(t, "3:line 3\n", h.ok("output", id, "--grep", "3$"))
	require.Equal(t, "line 3\ndone\n", h.ok("output", id, "--tail", "2"))
	require.Equal(t, "ne 1", h.ok("output", id, "--offset", "2", "--limit", "4", "--raw"))

	var page map[string]any
	require.NoError(t, json.Unmarshal([]byte(h.ok("--json", "output", id, "--unit", "lines", "--limit", "2")), &page))
	require.Equal(t, map[string]any{"stream": "stdout", "unit": "lines", "offset": 0.0, "next_offset": 2.0,
		"total_size": 4.0, "has_more": true, "text": "line 1\nline 2\n"}, page)
	page = nil
	require.NoError(t, json.Unmarshal([]byte(h.ok("--json", "output", id, "--raw", "--limit", "4")), &page))
	data, err := base64.StdEncoding.DecodeString(page["data_base64"].(string))
	require.NoError(t, err)
	require.Equal(t, "line", string(data))
	require.NotContains(t, page, "text")
	page = nil
	require.NoError(t, json.Unmarshal([]byte(h.ok("--json", "output", id, "--grep", "^line [13]")), &page))
	require.Equal(t, []any{map[string]any{"line": 1.0, "text": "line 1"}, map[string]any{"line": 3.0, "text": "line 3"}},
		page["matches"])

	r := h.bgcmd("output", id, "--unit", "words")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, `--unit "words"`)
	r = h.bgcmd("output", id, "--grep", "(")
	require.Equal(t, 2, r.code, "an invalid pattern is a usage error")
}

func TestStatusJSONHasTheContractFields(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	r := h.bgcmd("--json", "run", "--wait", "--label", "pr=42", "--", fixture(t, "exit-with.sh"), "3")
	require.Equal(t, 3, r.code, r.stderr)
	var s map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &s), "run --wait --json prints one object: %q", r.stdout)
	for _, k := range []string{"id", "session", "argv", "exe", "cwd", "state", "exit_code", "signal", "error",
		"pid", "pgid", "supervisor_pid", "created_at", "started_at", "finished_at", "duration_ms",
		"stdout", "stderr", "tail_preview", "counters"} {
		require.Contains(t, s, k)
	}
	require.Equal(t, "exited", s["state"])
	require.Equal(t, 3.0, s["exit_code"])
	require.Equal(t, map[string]any{"pr": "42"}, s["labels"])
	require.Equal(t, map[string]any{"running": 0.0, "finished": 0.0, "queued": 0.0}, s["counters"])
	for _, k := range []string{"bytes", "sha256", "artifact_id"} {
		require.Contains(t, s["stdout"], k)
	}
	for _, k := range []string{"created_at", "started_at", "finished_at"} {
		ts, err := time.Parse(time.RFC3339Nano, s[k].(string))
		require.NoError(t, err)
		require.NotZero(t, ts.Nanosecond(), "times carry nanoseconds")
	}
	require.Regexp(t, uuidRE, s["id"])
	require.Contains(t, s["tail_preview"], "exiting with 3")

	var started map[string]any
	require.NoError(t, json.Unmarshal([]byte(h.ok("--json", "run", "--", fixture(t, "exit-with.sh"), "0")), &started))
	require.Regexp(t, uuidRE, started["id"])
	require.Contains(t, started, "counters")
}

func TestRunWaitExitsWithTheCommandsCode(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args func(t *testing.T) []string
		code int
	}{
		{"success", func(t *testing.T) []string { return []string{"--", fixture(t, "exit-with.sh"), "0"} }, 0},
		{"its own code", func(t *testing.T) []string { return []string{"--", fixture(t, "exit-with.sh"), "9"} }, 9},
		{"a signal is 128+signo", func(t *testing.T) []string { return []string{"--", fixture(t, "kill-self.sh"), "TERM"} }, 143},
		{"timeout is 124", func(t *testing.T) []string {
			return []string{"--timeout", "200ms", "--", fixture(t, "slow-lines.sh"), "100", "0.1"}
		}, 124},
		{"output_limit is 125", func(t *testing.T) []string {
			return []string{"--max-output", "1KiB", "--", fixture(t, "print-bytes.sh"), "100000"}
		}, 125},
		{"start_failed is 127", func(t *testing.T) []string { return []string{"--", "/nonexistent/bin/tool"} }, 127},
		{"a shell line is refused with 3", func(t *testing.T) []string { return []string{"--", "make test && rm -rf /"} }, 3},
		{"an executable off the list is refused with 3", func(t *testing.T) []string { return []string{"--", "/bin/rm", "-rf", "/"} }, 3},
		{"a cap above the policy is refused with 3", func(t *testing.T) []string {
			return []string{"--max-output", "1G", "--", fixture(t, "exit-with.sh"), "0"}
		}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			h := newHome(t)
			r := h.bgcmd(append([]string{"run", "--wait"}, tc.args(t)...)...)
			require.Equal(t, tc.code, r.code, "stdout %q stderr %q", r.stdout, r.stderr)
			if tc.code == 3 {
				require.Contains(t, r.stderr, "refused (")
				require.Contains(t, r.stderr, "hint: ")
				require.Empty(t, r.stdout, "a refusal creates no job")
			}
		})
	}
}

func TestRunWithoutWaitExits127WhenTheCommandCannotStart(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	r := h.bgcmd("run", "--", "/nonexistent/bin/tool")
	require.Equal(t, 127, r.code)
	require.Regexp(t, uuidRE, strings.TrimSpace(r.stdout), "the job id is printed all the same")
	require.Contains(t, r.stderr, "could not start")
}

func TestKillStopsTheGroupAndWaitExits137(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	id := h.start(fixture(t, "ignore-term.sh"))
	eventually(t, "ready", func() bool { return strings.Contains(h.ok("output", id), "ready") })
	out := h.ok("kill", id)
	require.Contains(t, out, "killed")
	r := h.bgcmd("wait", id)
	require.Equal(t, 137, r.code)
	require.Contains(t, h.ok("kill", id), "already settled")
	r = h.bgcmd("kill", "--signal", "NOPE", id)
	require.Equal(t, 2, r.code)
	require.Contains(t, h.ok("output", id), "ready", "a killed job's output is kept")
}

func TestWaitTimeoutBoundsTheWaitNotTheCommand(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	flag := filepath.Join(t.TempDir(), "go")
	id := h.start(fixture(t, "wait-for-file.sh"), flag, "4")
	r := h.bgcmd("--json", "wait", "--timeout", "300ms", id)
	require.Equal(t, 5, r.code, r.stderr)
	require.Contains(t, r.stderr, "still running")
	var s map[string]any
	require.NoError(t, json.Unmarshal([]byte(r.stdout), &s))
	require.Equal(t, "running", s["state"])
	require.NoError(t, os.WriteFile(flag, nil, 0o600))
	require.Equal(t, 4, h.bgcmd("wait", "--timeout", "20s", id).code)
}

func TestFollowStreamsUntilTheJobSettles(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	id := h.start(fixture(t, "slow-lines.sh"), "3", "0.1")
	r := h.bgcmd("follow", id)
	require.Equal(t, 0, r.code, r.stderr)
	require.Equal(t, "line 1\nline 2\nline 3\ndone\n", r.stdout)

	id = h.start(fixture(t, "exit-with.sh"), "6")
	r = h.bgcmd("--json", "follow", id)
	require.Equal(t, 6, r.code)
	lines := jsonLines(t, r.stdout)
	require.GreaterOrEqual(t, len(lines), 3)
	var text = map[string]string{}
	for _, l := range lines[:len(lines)-1] {
		require.Equal(t, "output", l["event"])
		text[l["stream"].(string)] += l["text"].(string)
	}
	require.Equal(t, map[string]string{"stdout": "out: exiting with 6\n", "stderr": "err: exiting with 6\n"}, text)
	last := lines[len(lines)-1]
	require.Equal(t, "status", last["event"])
	require.Equal(t, id, last["id"])
	require.Equal(t, 6.0, last["exit_code"])
}

func TestEnvIsInheritedOrReplacedNeverMergedByAccident(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	r := h.bgcmd("run", "--wait", "--replace-env", "--env", "FOO=bar baz", "--", "/usr/bin/env")
	require.Equal(t, 0, r.code, r.stderr)
	id := strings.Split(r.stdout, "\n")[0]
	require.Equal(t, "FOO=bar baz\n", h.ok("output", id))

	r = h.bgcmd("env:SECRET_TOKEN=s3cr3t", "run", "--wait", "--env", "FOO=1", "--", "/usr/bin/env")
	require.Equal(t, 0, r.code, r.stderr)
	id = strings.Split(r.stdout, "\n")[0]
	out := h.ok("output", id)
	require.Contains(t, out, "FOO=1\n")
	require.Contains(t, out, "PATH=/usr/bin:/bin\n", "--env without --replace-env adds to the inherited environment")
	require.NotContains(t, h.ok("sql", "SELECT * FROM jobs"), "s3cr3t", "values are never stored")

	require.Equal(t, 2, h.bgcmd("run", "--env", "NOEQUALS", "--", "/usr/bin/env").code)
}

func TestUnknownJobIDExits4WithAClearLine(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	const id = "01900000-0000-7000-8000-000000000000"
	for _, args := range [][]string{{"status", id}, {"wait", id}, {"output", id}, {"follow", id}, {"kill", id}} {
		r := h.bgcmd(args...)
		require.Equal(t, 4, r.code, "%v: %s", args, r.stderr)
		require.Equal(t, "bgcmd: no job with id \""+id+"\" (bgcmd list shows the jobs)\n", r.stderr)
	}
}

func TestBadFlagsAreUsageErrors(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"run", "--max-output", "10parsecs", "--", "/usr/bin/env"}, `--max-output "10parsecs"`},
		{[]string{"run", "--max-output", "0", "--", "/usr/bin/env"}, "at least 1"},
		{[]string{"run", "--timeout", "10", "--", "/usr/bin/env"}, "needs a unit"},
		{[]string{"run", "--timeout", "-5s", "--", "/usr/bin/env"}, "negative"},
		{[]string{"wait", "--timeout", "soon", "x"}, `--timeout "soon"`},
		{[]string{"list", "--limit", "0"}, "out of range"},
		{[]string{"list", "--limit", "1001"}, "out of range"},
		{[]string{"list", "--state", "paused"}, `--state "paused"`},
		{[]string{"prune", "--older-than", "a week"}, "--older-than"},
		{[]string{"run"}, "requires at least 1 arg"},
		{[]string{"frobnicate"}, "unknown command"},
	} {
		r := h.bgcmd(tc.args...)
		require.Equal(t, 2, r.code, "%v: %s", tc.args, r.stderr)
		require.Contains(t, r.stderr, tc.want, tc.args)
	}
	// Sizes people write are accepted.
	for _, size := range []string{"10MiB", "512KiB", "1048576", "1.5M"} {
		r := h.bgcmd("run", "--wait", "--max-output", size, "--", fixture(t, "exit-with.sh"), "0")
		require.Equal(t, 0, r.code, "%s: %s", size, r.stderr)
	}
}

func TestNoPolicyOrABrokenOneRefusesWithExit3(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	require.NoError(t, os.Remove(filepath.Join(h.dir, "policy.toml")))
	r := h.bgcmd("run", "--", "/usr/bin/env")
	require.Equal(t, 3, r.code)
	require.Contains(t, r.stderr, "no policy set")
	require.Contains(t, r.stderr, "Create "+filepath.Join(h.dir, "policy.toml"))
	require.Contains(t, r.stderr, "allowed_executables = [")
	require.Contains(t, h.ok("sql", "--csv", "SELECT code FROM refusal_log"), "no_policy", "the refusal is recorded")

	h.writePolicy("allowed_executables = [\"/usr/bin/env\"]\ncwd_root = \"/tmp\"\nkill_grace = 5\n")
	r = h.bgcmd("run", "--", "/usr/bin/env")
	require.Equal(t, 3, r.code)
	require.Contains(t, r.stderr, filepath.Join(h.dir, "policy.toml")+":3: key kill_grace:")
	require.Equal(t, 0, h.bgcmd("list").code, "reading history needs no policy")

	r = h.bgcmd("--policy", filepath.Join(h.dir, "missing.toml"), "run", "--", "/usr/bin/env")
	require.Equal(t, 3, r.code)
	require.Contains(t, r.stderr, "missing.toml")
}

func TestReconcileReports(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	h.start(fixture(t, "exit-with.sh"), "0")
	var rep map[string]any
	require.NoError(t, json.Unmarshal([]byte(h.ok("--json", "reconcile")), &rep))
	for _, k := range []string{"checked", "alive", "from_exit_record", "orphaned", "lost"} {
		require.Contains(t, rep, k)
	}
	require.Contains(t, h.ok("reconcile"), "running job(s)")
}
