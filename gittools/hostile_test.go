package gittools_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/gittools"
)

// hostileRepo is a repository whose own configuration tries to make any git
// command that reads it run a program: every configured command is a script
// that creates a file named after it in markers.
type hostileRepo struct {
	dir     string
	markers string
	signed  string // a commit with a (bogus) signature, main's tip
	base    string // the commit before it
}

// markScript writes an executable script that creates markers/name and
// reads its stdin to the end (so a filter's writer sees no broken pipe),
// except for the long-running filter process, which would wait for git
// while git waits for its handshake.
func markScript(t testing.TB, scripts, markers, name string) string {
	t.Helper()
	p := filepath.Join(scripts, name)
	drain := "cat >/dev/null\n"
	if name == "filter-process" {
		drain = ""
	}
	body := fmt.Sprintf("#!/bin/sh\n: > '%s/%s'\n%sexit 0\n", markers, name, drain)
	require.NoError(t, os.WriteFile(p, []byte(body), 0o755))
	return p
}

// hookNames are the hooks installed in both hook directories.
var hookNames = []string{"post-index-change", "reference-transaction", "post-checkout",
	"pre-commit", "post-commit", "pre-auto-gc", "post-rewrite", "fsmonitor-watchman", "pre-push"}

// newHostileRepo builds the hostile fixture: a history with a filtered and
// textconv'd file, a signed tip, a staged change, an unstaged change, a file
// whose stat data changed but not its content, and a .git/config that arms
// the fsmonitor hook, the pager (core and per command), hooks (hooksPath and
// .git/hooks), diff.external, a diff driver's command and textconv, clean,
// smudge and process filters (required), gpg programs with
// log.showSignature, aliases named after every subcommand the tools run,
// forced colour and submodule recursion. The configuration is written last,
// so building the fixture trips nothing.
func newHostileRepo(t testing.TB) *hostileRepo {
	t.Helper()
	h := &hostileRepo{dir: t.TempDir(), markers: t.TempDir()}
	scripts, hooks := t.TempDir(), t.TempDir()
	d := h.dir
	gitIn(t, d, nil, "init", "-q", "-b", "main")
	writeFile(t, d, ".gitattributes", "*.evil diff=evil filter=evil\n*.proc filter=proc\n")
	writeFile(t, d, "secret.evil", "v1\n")
	writeFile(t, d, "data.proc", "p\n")
	writeFile(t, d, "README.md", "hostile\n")
	gitIn(t, d, nil, "add", "-A")
	commitAt(t, d, "2024-01-01T00:00:00Z", "alice", "first")
	gitIn(t, d, nil, "branch", "side")
	writeFile(t, d, "secret.evil", "v2\n")
	gitIn(t, d, nil, "add", "-A")
	h.base = commitAt(t, d, "2024-02-01T00:00:00Z", "bob", "second")

	tree := gitIn(t, d, nil, "rev-parse", "HEAD^{tree}")
	obj := fmt.Sprintf("tree %s\nparent %s\nauthor Alice Example <alice@example.com> 1709251200 +0000\n"+
		"committer Alice Example <alice@example.com> 1709251200 +0000\n"+
		"gpgsig -----BEGIN PGP SIGNATURE-----\n \n iQEzBAABCAAdFiEEbogusbogusbogus\n =abcd\n -----END PGP SIGNATURE-----\n\nsigned\n",
		tree, h.base)
	cmd := exec.Command("git", "hash-object", "-t", "commit", "-w", "--stdin")
	cmd.Dir, cmd.Env, cmd.Stdin = d, testEnv(d), strings.NewReader(obj)
	out, err := cmd.Output()
	require.NoError(t, err)
	h.signed = strings.TrimSpace(string(out))
	gitIn(t, d, nil, "update-ref", "refs/heads/main", h.signed)

	writeFile(t, d, "README.md", "hostile\nstaged\n")
	gitIn(t, d, nil, "add", "README.md")
	writeFile(t, d, "secret.evil", "v3 uncommitted\n")
	later := time.Now().Add(2 * time.Hour)
	require.NoError(t, os.Chtimes(filepath.Join(d, "data.proc"), later, later))

	m := func(name string) string { return markScript(t, scripts, h.markers, name) }
	for _, name := range hookNames {
		for _, dir := range []string{hooks, filepath.Join(d, ".git", "hooks")} {
			body := fmt.Sprintf("#!/bin/sh\n: > '%s/hook-%s'\ncat >/dev/null\nexit 0\n", h.markers, name)
			require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o755))
		}
	}
	var cfg strings.Builder
	fmt.Fprintf(&cfg, "[core]\n\tfsmonitor = %s\n\tpager = %s\n\thooksPath = %s\n\tsshCommand = %s\n\teditor = %s\n\taskPass = %s\n",
		m("fsmonitor"), m("pager"), hooks, m("ssh"), m("editor"), m("askpass"))
	fmt.Fprintf(&cfg, "[diff]\n\texternal = %s\n\tautoRefreshIndex = true\n", m("diff-external"))
	fmt.Fprintf(&cfg, "[diff \"evil\"]\n\ttextconv = %s\n\tcommand = %s\n\tcachetextconv = true\n", m("textconv"), m("diff-command"))
	fmt.Fprintf(&cfg, "[filter \"evil\"]\n\tclean = %s\n\tsmudge = %s\n\trequired = true\n", m("filter-clean"), m("filter-smudge"))
	fmt.Fprintf(&cfg, "[filter \"proc\"]\n\tprocess = %s\n\trequired = true\n", m("filter-process"))
	fmt.Fprintf(&cfg, "[log]\n\tshowSignature = true\n[gpg]\n\tprogram = %s\n[gpg \"ssh\"]\n\tprogram = %s\n[gpg \"x509\"]\n\tprogram = %s\n",
		m("gpg"), m("gpg-ssh"), m("gpg-x509"))
	fmt.Fprintf(&cfg, "[color]\n\tui = always\n\tdiff = always\n\tblame = always\n[submodule]\n\trecurse = true\n")
	cfg.WriteString("[alias]\n")
	for _, sub := range []string{"log", "show", "diff", "blame", "merge-base", "ls-files", "rev-parse", "config"} {
		fmt.Fprintf(&cfg, "\t%s = !%s\n", sub, m("alias-"+sub))
	}
	cfg.WriteString("[pager]\n")
	for _, sub := range []string{"log", "show", "diff", "blame", "merge-base", "ls-files"} {
		fmt.Fprintf(&cfg, "\t%s = %s\n", sub, m("pager-"+sub))
	}
	f, err := os.OpenFile(filepath.Join(d, ".git", "config"), os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString(cfg.String())
	require.NoError(t, err)
	require.NoError(t, f.Close())
	return h
}

// markersIn lists the marker files created so far.
func markersIn(t testing.TB, dir string) []string {
	t.Helper()
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	var names []string
	for _, e := range entries {
		names = append(names, e.Name())
	}
	return names
}

// TestHostileFixtureIsArmed proves the fixture is hostile: ordinary git
// commands on it run its programs and write its index. Without this, a
// clean result in TestHostileRepositoryRunsNothingAndWritesNothing could
// mean a broken fixture.
func TestHostileFixtureIsArmed(t *testing.T) {
	t.Parallel()
	h := newHostileRepo(t)
	plain := func(args ...string) {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = h.dir, testEnv(h.dir)
		_ = cmd.Run() // failures are expected: the scripts print nothing
	}
	plain("diff")
	plain("diff", "--", "secret.evil")
	plain("diff", "--no-ext-diff", "--", "secret.evil")
	plain("diff", "--no-ext-diff", h.base+"~1", h.base)
	plain("blame", "HEAD", "--", "secret.evil")
	plain("log", "-1", "--format=%H")
	plain("status")

	got := markersIn(t, h.markers)
	for _, want := range []string{"filter-clean", "filter-smudge", "filter-process", "diff-command",
		"textconv", "gpg", "fsmonitor"} {
		require.Contains(t, got, want)
	}
}

func TestHostileRepositoryRunsNothingAndWritesNothing(t *testing.T) {
	t.Parallel()
	h := newHostileRepo(t)
	before := snapshot(t, h.dir)
	ts, st := newToolset(t, h.dir)
	ctx := context.Background()

	run := func(name string, call func() (*gittools.Result, error)) *gittools.Result {
		t.Helper()
		res, err := call()
		require.NoError(t, err, name)
		requireExited0(t, res)
		require.NotContains(t, res.Output, "\x1b[", "%s: no colour", name)
		return res
	}
	res := run("log", func() (*gittools.Result, error) { return ts.Log(ctx, gittools.LogArgs{}) })
	require.Contains(t, res.Output, h.signed+" ")
	require.NotContains(t, res.Output, "gpg", "no signature check")
	run("log path", func() (*gittools.Result, error) {
		return ts.Log(ctx, gittools.LogArgs{Path: "secret.evil", Author: "alice", Since: "2023-01-01"})
	})
	res = run("show", func() (*gittools.Result, error) { return ts.Show(ctx, gittools.ShowArgs{Rev: h.base}) })
	require.Contains(t, res.Output, "-v1\n+v2\n", "the raw content, no textconv")
	run("show stat", func() (*gittools.Result, error) { return ts.Show(ctx, gittools.ShowArgs{Stat: true}) })
	res = run("show file", func() (*gittools.Result, error) { return ts.Show(ctx, gittools.ShowArgs{Path: "secret.evil"}) })
	require.Equal(t, "v2\n", res.Output)
	run("show blob rev", func() (*gittools.Result, error) {
		return ts.Show(ctx, gittools.ShowArgs{Rev: gitIn(t, h.dir, nil, "rev-parse", "HEAD:secret.evil")})
	})
	res = run("diff work tree", func() (*gittools.Result, error) { return ts.Diff(ctx, gittools.DiffArgs{}) })
	require.Contains(t, res.Output, "-v2\n+v3 uncommitted\n")
	require.NotContains(t, res.Output, "data.proc", "a stat-only change is no change")
	run("diff base", func() (*gittools.Result, error) { return ts.Diff(ctx, gittools.DiffArgs{Base: "side", Stat: true}) })
	run("diff staged", func() (*gittools.Result, error) { return ts.Diff(ctx, gittools.DiffArgs{Staged: true}) })
	run("diff revisions", func() (*gittools.Result, error) {
		return ts.Diff(ctx, gittools.DiffArgs{Base: "side", Head: "main", Paths: []string{"secret.evil"}, Context: intp(1)})
	})
	res = run("blame", func() (*gittools.Result, error) { return ts.Blame(ctx, gittools.BlameArgs{Path: "secret.evil"}) })
	require.Contains(t, res.Output, "1) v2\n")
	run("merge-base", func() (*gittools.Result, error) {
		return ts.MergeBase(ctx, gittools.MergeBaseArgs{A: "main", B: "side"})
	})
	res = run("ls-files", func() (*gittools.Result, error) { return ts.LsFiles(ctx, gittools.LsFilesArgs{Pattern: "*.evil"}) })
	require.Equal(t, "secret.evil\n", res.Output)

	require.Empty(t, markersIn(t, h.markers), "no configured program ran")
	require.Equal(t, before, snapshot(t, h.dir), "the work tree and .git (index included) are byte-identical")

	// Every job ran with the replaced environment, carrying the overrides
	// for the filters this repository names.
	rec, err := st.Get(ctx, res.JobID)
	require.NoError(t, err)
	require.True(t, rec.EnvReplaced)
	for _, name := range []string{"GIT_CONFIG_NOSYSTEM", "GIT_CONFIG_GLOBAL", "HOME", "GIT_TERMINAL_PROMPT",
		"GIT_OPTIONAL_LOCKS", "LC_ALL", "PATH", "GIT_CONFIG_COUNT"} {
		require.Contains(t, rec.EnvNames, name)
	}
}
