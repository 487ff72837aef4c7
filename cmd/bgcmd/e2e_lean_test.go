package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/internal/launch"
	"github.com/bgcmd/bgcmd/internal/testkit"
)

// copyBinaries copies the e2e binaries named (bgcmd, bgcmd-full,
// bgcmd-supervisor) into a new directory and returns its path.
func copyBinaries(t *testing.T, names ...string) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range names {
		src, err := os.Open(filepath.Join(filepath.Dir(binary), name))
		require.NoError(t, err)
		out, err := os.OpenFile(filepath.Join(dir, name), os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
		require.NoError(t, err)
		_, err = io.Copy(out, src)
		src.Close()
		require.NoError(t, err)
		require.NoError(t, out.Close())
	}
	return dir
}

// The lean bgcmd (as make build builds it) links none of what it hands to
// bgcmd-full, nor does bgcmd-supervisor: their whole package sets, which
// both processes of every `bgcmd run` initialise, leave out the MCP SDK,
// net/http, the web view, the git tools, the PostgreSQL driver and the
// migrations. The full build links them all (so the check can fail).
func TestLeanBuildsLinkNoneOfWhatTheyHandOver(t *testing.T) {
	t.Parallel()
	heavy := []string{
		"github.com/modelcontextprotocol/go-sdk/mcp",
		"net/http",
		"github.com/bgcmd/bgcmd/webui",
		"github.com/bgcmd/bgcmd/gittools",
		"github.com/bgcmd/bgcmd/agenttools",
		"github.com/jackc/pgx/v5",
		"github.com/pressly/goose/v3",
	}
	deps := func(tags, pkg string) []string {
		out, err := exec.Command(goTool(), "list", "-tags", tags, "-deps", pkg).CombinedOutput()
		require.NoError(t, err, "%s", out)
		return strings.Fields(string(out))
	}
	full := deps("", ".")
	for _, pkg := range heavy {
		require.Contains(t, full, pkg, "the full bgcmd links %s", pkg)
	}
	for _, pkg := range []string{".", "../bgcmd-supervisor"} {
		lean := deps(launch.LeanTag, pkg)
		for _, h := range heavy {
			require.NotContains(t, lean, h, "%s built with %s links %s", pkg, launch.LeanTag, h)
		}
	}
}

// `bgcmd mcp` of the lean bgcmd becomes bgcmd-full in the same process:
// the pid an MCP client started serves the protocol, its executable
// bgcmd-full, with the same arguments.
func TestLeanBgcmdHandsMCPToFullInPlace(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	cmd := exec.Command(binary, "mcp")
	cmd.Dir, cmd.Env = h.root, h.env
	stdin, err := cmd.StdinPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	full := filepath.Join(filepath.Dir(binary), launch.FullName)
	pid := cmd.Process.Pid
	// The executable changes before the new arguments are in place (the
	// kernel sets them up later in the exec): both are waited for.
	var exe, cmdline string
	eventually(t, "the mcp process to be bgcmd-full with its arguments", func() bool {
		e, _ := os.Readlink(fmt.Sprintf("/proc/%d/exe", pid))
		c, _ := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid))
		exe, cmdline = e, string(c)
		return exe == full && cmdline != ""
	})
	require.Equal(t, full+"\x00mcp\x00", cmdline)
	require.NoError(t, stdin.Close()) // the client leaves: the server ends
	require.NoError(t, cmd.Wait())
}

// Without bgcmd-full beside it, the lean bgcmd still runs the everyday
// path in full (a migrated SQLite store: run, wait, status, output, list),
// and everything it would hand over fails saying what is missing and how
// to mend it, having recorded nothing.
func TestLeanBgcmdWithoutFull(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	h.ok("list") // the e2e bgcmd migrates the new store through its bgcmd-full
	h.bin = filepath.Join(copyBinaries(t, "bgcmd", launch.SupervisorName), "bgcmd")
	missing := "no " + filepath.Join(filepath.Dir(h.bin), launch.FullName) + " beside this bgcmd: install it with bgcmd (make build builds both)"

	id := h.start(fixture(t, "exit-with.sh"), "0")
	require.Equal(t, 0, h.bgcmd("wait", id).code)
	require.Equal(t, "exited", h.status(id)["state"])
	require.Contains(t, h.ok("list"), id)

	for _, tc := range []struct {
		cmd  string
		args []string
	}{
		{"mcp", []string{"mcp"}}, {"git", []string{"git", "log"}}, {"ui", []string{"ui"}},
		{"mcp", []string{"help", "mcp"}}, {"mcp", []string{"mcp", "--help"}},
	} {
		r := h.bgcmd(tc.args...)
		require.Equal(t, 1, r.code, "%v: %+v", tc.args, r)
		require.Contains(t, r.stderr, "bgcmd "+tc.cmd+" is served by bgcmd-full; "+missing, "%v", tc.args)
	}
	// Under --json, wherever it stands before the command's own arguments,
	// the failed hand-over is one error object, as every other error is;
	// a --json among git's arguments after -- is git's, not bgcmd's.
	for _, args := range [][]string{
		{"--json", "mcp"}, {"mcp", "--json"}, {"--json", "git", "log"}, {"git", "--json=true", "log"},
		{"--json", "help", "mcp"}, {"help", "mcp", "--json"}, {"ui", "--json", "--addr", "127.0.0.1:0"},
	} {
		r := h.bgcmd(args...)
		require.Equal(t, 1, r.code, "%v: %+v", args, r)
		require.Empty(t, r.stdout, args)
		var e struct {
			Error struct{ Code, Message, Hint string }
		}
		require.NoError(t, json.Unmarshal([]byte(r.stderr), &e), "%v: stderr %q", args, r.stderr)
		require.Equal(t, "runtime", e.Error.Code, args)
		require.Contains(t, e.Error.Message, " is served by bgcmd-full; "+missing, args)
		require.Equal(t, 1, strings.Count(strings.TrimSpace(r.stderr), "\n")+1, "one line: %q", r.stderr)
	}
	for _, args := range [][]string{{"git", "--", "--json"}, {"--json=false", "mcp"}} {
		r := h.bgcmd(args...)
		require.Equal(t, 1, r.code, "%v: %+v", args, r)
		require.True(t, strings.HasPrefix(r.stderr, "bgcmd: bgcmd "), "%v: a line, not JSON: %q", args, r.stderr)
	}
	r := h.bgcmd("--db", "postgres://nobody@/nowhere?host=/nonexistent", "list")
	require.Equal(t, 1, r.code, "%+v", r)
	require.Contains(t, r.stderr, "open store postgres://nobody@/nowhere?host=/nonexistent: this build of bgcmd has no PostgreSQL driver: this lean build leaves that to bgcmd-full")
	require.Contains(t, r.stderr, missing)

	fresh := newHome(t)
	fresh.bin = h.bin
	r = fresh.bgcmd("run", "--", fixture(t, "exit-with.sh"), "0")
	require.Equal(t, 1, r.code, "%+v", r)
	require.Contains(t, r.stderr, "its schema is at version 0 and this build of bgcmd, which does not migrate, knows version")
	require.Contains(t, r.stderr, missing)
	fresh.bin = binary
	fresh.ok("list") // migrates, through the e2e bgcmd-full
	require.Equal(t, "state\n", fresh.ok("sql", "--csv", "SELECT state FROM jobs"), "the refused run recorded nothing")
}

// The lean bgcmd hands over only to a bgcmd-full of its own build: one of
// another build, a lean build under that name (which would hand the
// command on to itself for ever) or no Go binary at all is refused before
// it runs, naming it.
func TestLeanBgcmdRefusesAFullNotOfItsBuild(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	dir := copyBinaries(t, "bgcmd")
	h.bin = filepath.Join(dir, "bgcmd")
	full := filepath.Join(dir, launch.FullName)
	for _, tc := range []struct {
		name  string
		plant func()
		says  string
	}{
		{"another build", func() {
			require.NoError(t, testkit.BuildStamped(goTool(), "github.com/bgcmd/bgcmd/cmd/bgcmd-supervisor",
				full, "another-build", launch.LeanTag, raceEnabled))
		}, full + " is of another build than this bgcmd: rebuild both with make build"},
		{"a lean build", func() {
			require.NoError(t, os.Remove(full))
			require.NoError(t, os.Link(h.bin, full))
		}, full + " is a lean build itself, not the full bgcmd: rebuild both with make build"},
		{"a script", func() {
			require.NoError(t, os.Remove(full))
			require.NoError(t, os.WriteFile(full, []byte("#!/bin/sh\necho planted\n"), 0o755))
		}, full + " is not a bgcmd binary"},
	} {
		tc.plant()
		r := h.bgcmd("mcp")
		require.Equal(t, 1, r.code, "%s: %+v", tc.name, r)
		require.Contains(t, r.stderr, "bgcmd mcp is served by bgcmd-full; "+tc.says, tc.name)
		require.NotContains(t, r.stdout+r.stderr, "planted", tc.name)
	}
}

// `bgcmd version` of the lean bgcmd names its bgcmd-full, and says what is
// wrong with it when it is missing.
func TestLeanVersionNamesFull(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	require.Contains(t, h.ok("version"), "\nfull "+filepath.Join(filepath.Dir(binary), launch.FullName)+"\n")
	h.bin = filepath.Join(copyBinaries(t, "bgcmd"), "bgcmd")
	full := filepath.Join(filepath.Dir(h.bin), launch.FullName)
	require.Contains(t, h.ok("version"), "\nfull "+full+
		": missing, so mcp, ui, git, PostgreSQL stores and migrations fail; install it with bgcmd (make build makes both)\n")
	// A lean build under its name is named as what the hand-over refuses.
	require.NoError(t, os.Link(h.bin, full))
	require.Contains(t, h.ok("version"), "\nfull "+full+
		": is a lean build itself, not the full bgcmd, so it is not used; rebuild both with make build\n")
}

// The shell completion of the commands the lean bgcmd hands over is
// bgcmd-full's: the same candidates, flags included.
func TestLeanBgcmdHandsCompletionToFull(t *testing.T) {
	t.Parallel()
	h := newHome(t)
	full := *h
	full.bin = filepath.Join(filepath.Dir(binary), launch.FullName)
	for _, args := range [][]string{{"git", ""}, {"mcp", "--r"}, {"ui", "--l"}, {"git", "log", "--max"}} {
		args = append([]string{"__complete"}, args...)
		want := full.ok(args...)
		require.Contains(t, want, "\t", "%v completes to something", args)
		require.Equal(t, want, h.ok(args...), "%v", args)
	}
}
