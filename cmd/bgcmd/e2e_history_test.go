package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// artifactPath is where a job's banked stream lives.
func (h *home) artifactPath(id, stream string) string {
	h.t.Helper()
	sha := h.status(id)[stream].(map[string]any)["sha256"].(string)
	return filepath.Join(h.dir, "artifacts", sha[:2], sha)
}

func TestListFiltersAndPages(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	a1 := h.start(fixture(t, "exit-with.sh"), "0")
	h.ok("wait", a1)
	b1 := strings.TrimSpace(h.ok("--session", "b", "run", "--", fixture(t, "exit-with.sh"), "1"))
	eventually(t, "b1 settles", func() bool { return h.peekState(b1) == "exited" })
	r := h.bgcmd("--session", "b", "run", "--wait", "--timeout", "100ms", "--", fixture(t, "slow-lines.sh"), "50", "0.1")
	require.Equal(t, 124, r.code)

	// list shows the current session's jobs; these checks span sessions
	// unless they name one.
	ids := func(args ...string) []string {
		if !slices.Contains(args, "--session") {
			args = append(args, "--all-sessions")
		}
		var out []string
		for _, j := range jsonLines(t, h.ok(append([]string{"--json", "list"}, args...)...)) {
			out = append(out, j["id"].(string))
		}
		return out
	}
	all := ids()
	require.Len(t, all, 3)
	require.Equal(t, a1, all[2], "newest first")
	require.Equal(t, []string{a1}, ids("--session", "default"))
	require.Len(t, ids("--session", "b"), 2)
	require.Len(t, ids("--state", "timeout"), 1)
	require.Len(t, ids("--state", "timeout,exited"), 3)
	require.Equal(t, []string{b1}, ids("--unread"), "b1 was never read; run --wait read the timeout")
	require.Len(t, ids("--since", "1h"), 3)
	require.Empty(t, ids("--since", "2999-01-01T00:00:00Z"))

	page1 := h.bgcmd("list", "--all-sessions", "--limit", "2")
	require.Equal(t, 0, page1.code)
	require.Contains(t, page1.stderr, "more: bgcmd list --before "+all[1])
	require.Equal(t, []string{all[2]}, ids("--limit", "2", "--before", all[1]), "keyset pages join up")

	table := h.ok("list", "--all-sessions")
	lines := strings.Split(strings.TrimSpace(table), "\n")
	require.Len(t, lines, 4)
	require.True(t, strings.HasPrefix(lines[0], "ID"))
	col := strings.Index(lines[0], "STATE")
	for _, l := range lines[1:] {
		require.NotEqual(t, ' ', rune(l[col]), "columns are aligned: %q", l)
		require.Equal(t, ' ', rune(l[col-1]), "columns are aligned: %q", l)
	}
	require.Contains(t, table, "exited 1 *", "unread jobs are marked")

	item := jsonLines(t, h.ok("--json", "list", "--all-sessions", "--limit", "1"))[0]
	for _, k := range []string{"id", "session", "argv", "exe", "cwd", "state", "exit_code", "signal",
		"created_at", "started_at", "finished_at", "duration_ms", "unread"} {
		require.Contains(t, item, k)
	}
}

func TestPruneDryRunThenRealSparesRunningAndUnreadJobs(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	// Read jobs: one with output of its own, one sharing output with a job
	// that stays.
	own := h.start(fixture(t, "print-bytes.sh"), "3000")
	h.ok("wait", own)
	shared := h.start(fixture(t, "exit-with.sh"), "0")
	h.ok("wait", shared)
	unread := h.start(fixture(t, "exit-with.sh"), "0")
	eventually(t, "unread settles", func() bool { return h.peekState(unread) == "exited" })
	flag := filepath.Join(t.TempDir(), "go")
	running := h.start(fixture(t, "wait-for-file.sh"), flag, "0")

	ownFile, sharedFile := h.artifactPath(own, "stdout"), h.artifactPath(shared, "stdout")
	r := h.bgcmd("prune")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "add --older-than DUR")
	r = h.bgcmd("prune", "--state", "running")
	require.Equal(t, 2, r.code)

	var dry map[string]any
	require.NoError(t, json.Unmarshal([]byte(h.ok("--json", "prune", "--older-than", "0s", "--dry-run")), &dry))
	require.Equal(t, true, dry["dry_run"])
	var dryIDs []string
	for _, j := range dry["jobs"].([]any) {
		dryIDs = append(dryIDs, j.(map[string]any)["id"].(string))
	}
	require.ElementsMatch(t, []string{own, shared}, dryIDs)
	st := h.status(own)
	ownBytes := st["stdout"].(map[string]any)["bytes"].(float64) + st["stderr"].(map[string]any)["bytes"].(float64)
	require.Equal(t, ownBytes, dry["freed_bytes"], "the shared output stays with the unread job: %v", dry["unreferenced"])
	human := h.ok("prune", "--older-than", "0s", "--dry-run")
	require.Contains(t, human, own)
	require.Contains(t, human, "would delete 2 job(s) and free "+fmtBytes(int64(ownBytes)))
	require.FileExists(t, ownFile, "a dry run deletes nothing")
	require.Equal(t, "exited", h.peekState(own))

	out := h.ok("prune", "--older-than", "0s", "--vacuum")
	require.Contains(t, out, "deleted 2 job(s)")
	require.Contains(t, out, "vacuumed")
	require.NoFileExists(t, ownFile)
	require.NoFileExists(t, ownFile+".idx")
	require.FileExists(t, sharedFile, "the unread job still references it")
	for _, id := range []string{own, shared} {
		require.Equal(t, 4, h.bgcmd("status", id).code)
		require.Equal(t, "n\n0\n", h.ok("sql", "--csv", "SELECT COUNT(*) AS n FROM job_events WHERE job_id = '"+id+"'"))
	}
	require.Equal(t, "exited", h.peekState(unread))
	require.Equal(t, "running", h.peekState(running))

	require.Contains(t, h.ok("prune", "--older-than", "0s", "--include-unread"), "deleted 1 job(s)")
	require.NoFileExists(t, sharedFile)
	require.Equal(t, "running", h.peekState(running), "running jobs are never pruned")
	require.NoError(t, os.WriteFile(flag, nil, 0o600))
	h.ok("wait", running)
}

func TestGCRemovesWhatACrashLeftBehind(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	kept := h.start(fixture(t, "exit-with.sh"), "0")
	h.ok("wait", kept)
	keptFile := h.artifactPath(kept, "stdout")
	// A crash after prune's commit leaves a file no row references; a
	// supervisor dying after its settle leaves its job directory.
	stray := filepath.Join(h.dir, "artifacts", "ab", strings.Repeat("ab", 32))
	require.NoError(t, os.MkdirAll(filepath.Dir(stray), 0o755))
	require.NoError(t, os.WriteFile(stray, []byte("orphan output"), 0o600))
	leftover := filepath.Join(h.dir, "jobs", kept)
	unknown := filepath.Join(h.dir, "jobs", "01900000-0000-7000-8000-000000000001")
	for _, d := range []string{leftover, unknown} {
		require.NoError(t, os.MkdirAll(d, 0o700))
		require.NoError(t, os.WriteFile(filepath.Join(d, "stdout.log"), []byte("x"), 0o600))
	}
	// A crash between writing the digest cache's temporary file and
	// renaming it over the cache leaves the temporary file in the home.
	digests := filepath.Join(h.dir, "exe-digests.json")
	require.FileExists(t, digests, "the start cached its executable's digest")
	tmp := filepath.Join(h.dir, ".exe-digests.json.tmp2718281828")
	require.NoError(t, os.WriteFile(tmp, []byte(`[{"path":`), 0o600))
	notOurs := filepath.Join(h.dir, ".notes.tmp1")
	require.NoError(t, os.WriteFile(notOurs, []byte("someone else's"), 0o600))
	// Named as a temporary file, but a symbolic link out of the home and a
	// directory: neither is one bgcmd wrote, so gc follows and removes
	// neither.
	outside := filepath.Join(t.TempDir(), "precious")
	require.NoError(t, os.WriteFile(outside, []byte("keep me"), 0o600))
	link := filepath.Join(h.dir, ".exe-digests.json.tmp31415")
	require.NoError(t, os.Symlink(outside, link))
	dirNamed := filepath.Join(h.dir, ".exe-digests.json.tmp27182")
	require.NoError(t, os.Mkdir(dirNamed, 0o700))

	out := h.ok("gc")
	require.Contains(t, out, "spared 4 younger than 15m", "a fresh file may be a bank or a write in progress")
	require.FileExists(t, stray)
	require.FileExists(t, tmp)

	var rep map[string]any
	require.NoError(t, json.Unmarshal([]byte(h.ok("--json", "gc", "--min-age", "0s", "--dry-run")), &rep))
	require.Len(t, rep["stray_files"], 1)
	require.Len(t, rep["job_dirs"], 2)
	require.Len(t, rep["temp_files"], 1)
	require.FileExists(t, stray)
	require.FileExists(t, tmp)

	out = h.ok("gc", "--min-age", "0s")
	require.Contains(t, out, "removed "+stray)
	require.Contains(t, out, "removed "+tmp+" (9 B): the temporary file of an interrupted write of "+digests)
	require.Contains(t, out, "removed 1 stray file(s), 2 leftover job dir(s) and 1 temporary file(s)")
	require.NoFileExists(t, stray)
	require.NoDirExists(t, leftover)
	require.NoDirExists(t, unknown)
	require.NoFileExists(t, tmp)
	require.FileExists(t, digests, "the cache itself stays")
	require.FileExists(t, notOurs, "a file bgcmd did not write stays")
	got, err := os.ReadFile(outside)
	require.NoError(t, err)
	require.Equal(t, "keep me", string(got), "gc never follows a link out of the home")
	_, err = os.Lstat(link)
	require.NoError(t, err, "a link is not a temporary file bgcmd wrote")
	require.DirExists(t, dirNamed)
	require.FileExists(t, keptFile, "referenced output stays")
	require.Equal(t, "out: exiting with 0\n", h.ok("output", kept))
}

func TestSQLIsReadOnlyWithTableCSVAndJSON(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	id := h.start(fixture(t, "exit-with.sh"), "2")
	h.bgcmd("wait", id)
	h.bgcmd("run", "--", "/bin/rm", "-rf", "/")

	table := h.ok("sql", "SELECT exe, jobs, failures FROM failures_by_exe")
	require.Equal(t, "exe"+strings.Repeat(" ", len(fixture(t, "exit-with.sh"))-1)+"jobs  failures\n"+
		fixture(t, "exit-with.sh")+"  1     1\n", table)
	require.Equal(t, "argv0,code\n/bin/rm,not_allowlisted\n", h.ok("sql", "--csv", "SELECT argv0, code FROM refusal_log"))
	rows := jsonLines(t, h.ok("--json", "sql", "SELECT id, state, exit_code, duration_ms >= 0 AS timed, NULL AS nothing_here, id FROM job_durations"))
	require.Equal(t, []map[string]any{{"id": id, "state": "exited", "exit_code": 2.0, "timed": 1.0, "nothing_here": nil, "id_2": id}}, rows)
	require.Equal(t, "NULL\n", strings.Split(h.ok("sql", "SELECT NULL AS x"), "\n")[1]+"\n")

	for _, q := range []string{"DELETE FROM jobs", "update jobs set state = 'killed'", "DROP VIEW refusal_log",
		"PRAGMA query_only = 0; DELETE FROM jobs"} {
		r := h.bgcmd("sql", q)
		require.Equal(t, 2, r.code, q)
		require.Contains(t, r.stderr, "sql is read-only: SQLite refused the write", q)
		require.Contains(t, r.stderr, "\nhint: bgcmd sql only reads; jobs leave the history through bgcmd prune", q)
	}
	js := h.bgcmd("--json", "sql", "DELETE FROM jobs")
	require.Equal(t, 2, js.code)
	var e struct {
		Error struct{ Code, Message, Hint string }
	}
	require.NoError(t, json.Unmarshal([]byte(js.stderr), &e), js.stderr)
	require.Equal(t, "usage", e.Error.Code)
	require.Contains(t, e.Error.Message, "sql is read-only: SQLite refused the write")
	require.NotContains(t, e.Error.Message, "hint:", "the hint has its own field")
	require.Equal(t, sqlWritesHint, e.Error.Hint)
	require.Equal(t, "exited", h.peekState(id), "nothing was written")
	r := h.bgcmd("sql", "SELEC 1")
	require.Equal(t, 2, r.code)
	require.Contains(t, r.stderr, "syntax error")
	require.Equal(t, 2, h.bgcmd("--json", "sql", "--csv", "SELECT 1").code)
}

func TestOutputOfARemovedArtifactNamesTheFile(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	id := h.start(fixture(t, "exit-with.sh"), "0")
	h.ok("wait", id)
	file := h.artifactPath(id, "stdout")
	require.NoError(t, os.Remove(file))
	r := h.bgcmd("output", id)
	require.Equal(t, 1, r.code)
	require.Contains(t, r.stderr, file)
	require.Contains(t, r.stderr, "missing")
	require.Equal(t, "err: exiting with 0\n", h.ok("output", id, "--stream", "stderr"), "the other stream is intact")
}
