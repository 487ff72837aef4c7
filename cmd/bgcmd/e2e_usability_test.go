package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestJobsAreNamedByAUniquePrefixOrSuffix(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	a := h.start(fixture(t, "exit-with.sh"), "3")
	b := h.start(fixture(t, "exit-with.sh"), "0")
	require.Equal(t, 3, h.bgcmd("wait", a[len(a)-8:]).code, "a suffix names the job")
	require.Equal(t, 0, h.bgcmd("wait", strings.ToUpper(b[len(b)-6:])).code)

	var s map[string]any
	require.NoError(t, json.Unmarshal([]byte(h.ok("--json", "status", a[len(a)-8:])), &s))
	require.Equal(t, a, s["id"])
	require.Contains(t, h.ok("output", b[len(b)-5:]), "", "output takes a suffix too")

	// Both ids start with the same time-ordered characters.
	r := h.bgcmd("status", a[:4])
	require.Equal(t, 2, r.code, r.stderr)
	require.Contains(t, r.stderr, "ambiguous")
	require.Contains(t, r.stderr, a)
	require.Contains(t, r.stderr, b)

	r = h.bgcmd("status", "abc")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "too short")
	r = h.bgcmd("kill", "ffff0000")
	require.Equal(t, 4, r.code, r.stderr)
}

func TestCompletionOffersJobIDsNewestFirst(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	a := h.start(fixture(t, "exit-with.sh"), "0")
	b := h.start(fixture(t, "exit-with.sh"), "1")
	for _, c := range []string{"status", "wait", "output", "kill", "follow", "verify"} {
		out := h.ok("__complete", c, "")
		lines := strings.Split(out, "\n")
		require.True(t, strings.HasPrefix(lines[0], b+"\t"), "%s: %q", c, out)
		require.True(t, strings.HasPrefix(lines[1], a+"\t"), "%s: %q", c, out)
		require.Contains(t, lines[0], "exit-with.sh 1")
	}
	require.NotContains(t, h.ok("__complete", "status", a, ""), b, "status takes one id")
}

func TestVersionNamesTheBuild(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	out := h.ok("--version")
	require.True(t, strings.HasPrefix(out, "bgcmd "), out)
	require.Equal(t, out, h.ok("version"))
	var v map[string]any
	require.NoError(t, json.Unmarshal([]byte(h.ok("--json", "version")), &v))
	require.NotEmpty(t, v["version"])
	require.Contains(t, v["go"], "go1.")
}

func TestJSONErrorsAreOneObjectOnStderr(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	for _, tc := range []struct {
		args       []string
		code       int
		kind, hint string
	}{
		{[]string{"status", "0190f7c2-8f1e-7b8a-9c61-3f0e2d4a5b6c"}, 4, "not_found", ""},
		{[]string{"status", "x"}, 2, "usage", ""},
		{[]string{"output", "--bogus", "x"}, 2, "usage", ""},
		{[]string{"run", "--", "/bin/sh", "-c", "true"}, 3, "not_allowlisted", "allowed_executables"},
		{[]string{"run", "--", "make test"}, 3, "shell_syntax", "argv"},
	} {
		r := h.bgcmd(append([]string{"--json"}, tc.args...)...)
		require.Equal(t, tc.code, r.code, "%v: %s", tc.args, r.stderr)
		require.Empty(t, r.stdout, tc.args)
		var e struct {
			Error struct{ Code, Message, Hint string }
		}
		require.NoError(t, json.Unmarshal([]byte(r.stderr), &e), "%v: stderr %q", tc.args, r.stderr)
		require.Equal(t, tc.kind, e.Error.Code, tc.args)
		require.NotEmpty(t, e.Error.Message, tc.args)
		require.NotContains(t, e.Error.Message, "\nhint:", "the hint has its own field")
		if tc.hint != "" {
			require.Contains(t, e.Error.Hint, tc.hint, tc.args)
		}
		require.Equal(t, 1, strings.Count(strings.TrimSpace(r.stderr), "\n")+1, "one line: %q", r.stderr)
	}
}

func TestOutputSaysWhenAnOffsetIsPastTheEndAndRefusesTailWithOffset(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	id := h.start(fixture(t, "print-bytes.sh"), "10")
	require.Equal(t, 0, h.bgcmd("wait", id).code)
	r := h.bgcmd("output", id, "--offset", "50")
	require.Equal(t, 0, r.code, r.stderr)
	require.Empty(t, r.stdout)
	require.Contains(t, r.stderr, "--offset 50 is at or past the end of stdout (10 bytes so far; the job has settled")
	var p map[string]any
	require.NoError(t, json.Unmarshal([]byte(h.ok("--json", "output", id, "--offset", "50")), &p))
	require.Equal(t, false, p["has_more"])

	r = h.bgcmd("output", id, "--tail", "3", "--offset", "2")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "give one of them")
}

func TestKillSaysWhichSignalEndedTheJob(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	id := h.start(fixture(t, "ignore-term.sh"))
	eventually(t, "the trap", func() bool { return strings.Contains(h.ok("output", id), "ready") })
	out := h.ok("kill", id)
	require.Contains(t, out, "killed")
	require.Contains(t, out, "sent SIGTERM; it ended on SIGKILL after the grace period", "SIGTERM was ignored")

	id = h.start(fixture(t, "slow-lines.sh"), "1000", "0.05")
	eventually(t, "a line", func() bool { return strings.Contains(h.ok("output", id), "line 1") })
	require.Contains(t, h.ok("kill", "--signal", "INT", id), "(ended on SIGINT)")
}

func TestFollowEndsWithTheOutcomeOnStderr(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	id := h.start(fixture(t, "exit-with.sh"), "3")
	r := h.bgcmd("follow", id)
	require.Equal(t, 3, r.code)
	require.Equal(t, "out: exiting with 3\n", r.stdout, "stdout is the job's output alone")
	require.Contains(t, r.stderr, "err: exiting with 3\nbgcmd: job "+id[len(id)-8:]+" exited 3 after ")
	require.True(t, strings.HasSuffix(r.stderr, "\n"), "one whole line")
	require.Equal(t, 1, strings.Count(r.stderr, "bgcmd: job "), r.stderr)
}

func TestOutputRefusesATamperedBankedLog(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	id := h.start(fixture(t, "exit-with.sh"), "0")
	require.Equal(t, 0, h.bgcmd("wait", id).code)
	sha := h.status(id)["stdout"].(map[string]any)["sha256"].(string)
	path := filepath.Join(h.dir, "artifacts", sha[:2], sha)
	orig, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, string(orig), h.ok("output", id, "--verify"))

	// Same size, other bytes: only the hash tells.
	forged := []byte(strings.Replace(string(orig), "exiting", "EXITING", 1))
	require.NoError(t, os.WriteFile(path, forged, 0o600))
	r := h.bgcmd("output", id, "--verify")
	require.Equal(t, 1, r.code)
	require.Empty(t, r.stdout, "a forged log is never served as the record")
	require.Contains(t, r.stderr, "does not match its record")
	require.Contains(t, r.stderr, "corrupt")

	// Another size: every read sees it.
	require.NoError(t, os.WriteFile(path, append(orig, "injected\n"...), 0o600))
	for _, args := range [][]string{{"output", id}, {"output", id, "--tail", "1"}, {"output", id, "--grep", "x"}} {
		r = h.bgcmd(args...)
		require.Equal(t, 1, r.code, args)
		require.Empty(t, r.stdout, args)
		require.Contains(t, r.stderr, "but was banked as", args)
	}
}

func TestAPolicyThatDoesNotLoadIsRecordedAsABadPolicyRefusal(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	h.writePolicy("allowed_executables = [\"/bin/true\"\ncwd_root = 3\n")
	r := h.bgcmd("--json", "run", "--", "/bin/true")
	require.Equal(t, 3, r.code, r.stderr)
	var e struct {
		Error struct{ Code, Message, Hint string }
	}
	require.NoError(t, json.Unmarshal([]byte(r.stderr), &e), r.stderr)
	require.Equal(t, "bad_policy", e.Error.Code)
	require.Contains(t, e.Error.Message, "policy.toml")
	out := h.ok("sql", "--csv", "SELECT code, argv FROM refusals")
	require.Contains(t, out, "bad_policy")
	require.Contains(t, out, "/bin/true")
}

func TestARefusalOverACeilingNamesTheKeyAndThePolicyFile(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	r := h.bgcmd("run", "--timeout", "1h", "--", fixture(t, "exit-with.sh"), "0")
	require.Equal(t, 3, r.code)
	require.Contains(t, r.stderr, "raises max_timeout in "+filepath.Join(h.dir, "policy.toml"))
}

func TestListJSONEndsWithACursorWhenMoreJobsMatch(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	var ids []string
	for range 3 {
		ids = append(ids, h.start(fixture(t, "exit-with.sh"), "0"))
	}
	lines := jsonLines(t, h.ok("--json", "list", "--limit", "2"))
	require.Len(t, lines, 3)
	require.Equal(t, ids[2], lines[0]["id"])
	require.Equal(t, ids[1], lines[1]["id"])
	require.NotContains(t, lines[2], "id", "the cursor line is not a job")
	next := lines[2]["next_before"].(string)
	require.Equal(t, ids[1], next)

	lines = jsonLines(t, h.ok("--json", "list", "--limit", "2", "--before", next))
	require.Len(t, lines, 1, "the last page has no cursor")
	require.Equal(t, ids[0], lines[0]["id"])
}
