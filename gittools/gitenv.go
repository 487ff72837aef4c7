package gittools

import (
	"bytes"
	"context"
	"fmt"
	"path/filepath"
	"strings"
)

// globalArgs follow the git executable in every invocation. Command-line
// configuration outranks every configuration file, so a hostile
// repository's own settings cannot bring back what these turn off.
var globalArgs = []string{
	"--no-pager",
	"-c", "color.ui=false",
	"-c", "diff.external=",
	"-c", "core.fsmonitor=false",
	"-c", "core.pager=cat",
	"-c", "core.hooksPath=/dev/null",
	"-c", "core.untrackedCache=false",
	"-c", "core.attributesFile=/dev/null",
	// git diff against the work tree would otherwise write the refreshed
	// index back (GIT_OPTIONAL_LOCKS does not stop it).
	"-c", "diff.autoRefreshIndex=false",
	// gpg.program runs for signed commits when this is on.
	"-c", "log.showSignature=false",
	"-c", "submodule.recurse=false",
	"-c", "blame.ignoreRevsFile=",
	// Files a repository's configuration may name anywhere: the mailmap
	// (the in-tree .mailmap, which git never follows as a symlink, still
	// applies; mailmap.blob is set by gitEnv), the diff order file, the
	// excludes file.
	"-c", "mailmap.file=",
	"-c", "diff.orderFile=/dev/null",
	"-c", "core.excludesFile=/dev/null",
	// No transport: a partial clone must not fetch missing objects (and run
	// ssh or a remote helper) to answer a read.
	"-c", "protocol.allow=never",
	"-c", "protocol.file.allow=never",
	"-c", "protocol.git.allow=never",
	"-c", "protocol.ssh.allow=never",
	"-c", "protocol.http.allow=never",
	"-c", "protocol.https.allow=never",
	"-c", "protocol.ext.allow=never",
}

// diffArgs follow a subcommand that produces diffs: no external diff
// driver, no textconv, no colour, submodules as one line each and never
// inspected in their own work trees.
var diffArgs = []string{
	"--no-ext-diff", "--no-textconv", "--no-color",
	"--submodule=short", "--ignore-submodules=dirty",
}

// baseEnv is the complete environment of every git process, before the
// per-repository overrides of gitEnv. It is built for a repository root.
func baseEnv(root string) map[string]string {
	return map[string]string{
		"GIT_CONFIG_NOSYSTEM": "1",
		"GIT_CONFIG_GLOBAL":   "/dev/null",
		"HOME":                "",
		// git's XDG files (attributes, ignore, config) fall under a path
		// that cannot be a directory.
		"XDG_CONFIG_HOME":        "/dev/null",
		"GIT_TERMINAL_PROMPT":    "0",
		"GIT_OPTIONAL_LOCKS":     "0",
		"GIT_NO_REPLACE_OBJECTS": "1",
		"GIT_NO_LAZY_FETCH":      "1",
		"GIT_ATTR_NOSYSTEM":      "1",
		"GIT_PAGER":              "cat",
		"PAGER":                  "cat",
		"LC_ALL":                 "C",
		"PATH":                   "/usr/bin:/bin",
		// Discovery never climbs above the root, and core.worktree cannot
		// move the work tree.
		"GIT_CEILING_DIRECTORIES": filepath.Dir(root),
		"GIT_WORK_TREE":           root,
	}
}

// envList turns an environment map into the "K=V" list os/exec takes.
func envList(env map[string]string) []string {
	list := make([]string, 0, len(env))
	for k, v := range env {
		list = append(list, k+"="+v)
	}
	return list
}

// overrides returns the configuration that disarms the drivers a repository
// names itself: for each filter.<name> it configures, empty clean, smudge
// and process commands (git then reads the file as is) and required=false;
// for each protocol.<name>.allow, never. names are the configuration
// variable names as git config --name-only lists them.
func overrides(names []string) [][2]string {
	var out [][2]string
	seen := map[string]bool{}
	add := func(k, v string) {
		if !seen[k] {
			seen[k] = true
			out = append(out, [2]string{k, v})
		}
	}
	for _, name := range names {
		dot1 := strings.IndexByte(name, '.')
		dot2 := strings.LastIndexByte(name, '.')
		if dot1 < 0 || dot2 <= dot1 {
			continue // no subsection
		}
		section, sub := strings.ToLower(name[:dot1]), name[dot1+1:dot2]
		switch section {
		case "filter":
			for _, k := range []string{"clean", "smudge", "process"} {
				add("filter."+sub+"."+k, "")
			}
			add("filter."+sub+".required", "false")
		case "protocol":
			add("protocol."+sub+".allow", "never")
		}
	}
	return out
}

// withOverrides returns a copy of env that also carries the overrides, as
// GIT_CONFIG_COUNT/KEY/VALUE variables (command-line scope, which handles
// subsection names that -c could not carry, such as one containing '=').
func withOverrides(env map[string]string, ov [][2]string) map[string]string {
	out := make(map[string]string, len(env)+2*len(ov)+1)
	for k, v := range env {
		out[k] = v
	}
	if len(ov) == 0 {
		return out
	}
	out["GIT_CONFIG_COUNT"] = fmt.Sprint(len(ov))
	for i, kv := range ov {
		out[fmt.Sprintf("GIT_CONFIG_KEY_%d", i)] = kv[0]
		out[fmt.Sprintf("GIT_CONFIG_VALUE_%d", i)] = kv[1]
	}
	return out
}

// gitEnv returns the environment for one tool invocation: the base
// environment plus overrides for every filter and protocol the repository's
// configuration names now. The configuration is read again for each call,
// so a driver added later is disarmed too.
// It also returns the directory git runs in.
//
// Without worktree (a tool that reads history only: show, log, blame,
// merge-base, a diff of two revisions or of the index against HEAD) git
// runs in the git directory and takes it for its work tree too, so that
// it reads nothing from the real work tree: there a directory that is a
// symlink to one outside would have it read that directory's
// .gitattributes (O_NOFOLLOW guards only a path's last element), and a
// .gitmodules symlink an outside file. The git directory holds neither
// (confineRoot checks that no symlink in it leads outside), so attributes
// and submodules come from the repository's own commits; the .mailmap is
// read from HEAD.
func (t *Toolset) gitEnv(ctx context.Context, worktree bool) (env map[string]string, dir string, err error) {
	out, err := t.git(ctx, t.env, "config", "--null", "--name-only", "--list")
	if err != nil {
		return nil, "", fmt.Errorf("read repository configuration: %w", err)
	}
	var names []string
	for _, n := range bytes.Split(out, []byte{0}) {
		if len(n) > 0 {
			names = append(names, string(n))
		}
	}
	ov := overrides(names)
	if worktree {
		return withOverrides(t.env, append(ov, [2]string{"mailmap.blob", ""})), t.root, nil
	}
	gitDir, err := gitDirOf(t.root)
	if err != nil {
		return nil, "", err
	}
	env = withOverrides(t.env, append(ov, [2]string{"mailmap.blob", "HEAD:.mailmap"}))
	env["GIT_DIR"], env["GIT_WORK_TREE"] = gitDir, gitDir
	return env, gitDir, nil
}
