package soak

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// refusalCase is one hostile start, as a CLI command line and as MCP
// run_command_bg arguments, with the refusal code both must give.
type refusalCase struct {
	name string
	// cli is `bgcmd run`'s flags and argv (after "run"); nil: the case
	// cannot be expressed on a command line.
	cli func(h *home) []string
	// mcp is run_command_bg's arguments; nil: not an MCP case.
	mcp func(h *home) map[string]any
	// noPolicy runs the case against a home without a policy.
	noPolicy bool
	code     string
}

// refusalCases covers the start contract's refusals: shell syntax, the
// allowlist, the cwd sandbox, NUL bytes, limits, and no policy at all.
func refusalCases(t *testing.T) []refusalCase {
	ok := fixture(t, "exit-with.sh")
	return []refusalCase{
		{name: "shell line as argv[0]", code: "shell_syntax",
			cli: func(*home) []string { return []string{"--", "ls -la | wc -l"} },
			mcp: func(*home) map[string]any { return map[string]any{"argv": []string{"ls -la | wc -l"}} }},
		{name: "argv as one shell string", code: "shell_syntax",
			mcp: func(*home) map[string]any { return map[string]any{"argv": ok + " 0 && rm -rf /"} }},
		{name: "not allowlisted", code: "not_allowlisted",
			cli: func(*home) []string { return []string{"--", "/bin/ls", "/"} },
			mcp: func(*home) map[string]any { return map[string]any{"argv": []string{"/bin/ls", "/"}} }},
		{name: "basename of an allowlisted path", code: "not_allowlisted",
			cli: func(*home) []string { return []string{"--", "true"} },
			mcp: func(*home) map[string]any { return map[string]any{"argv": []string{"true"}} }},
		{name: "cwd escape via ..", code: "cwd_escape",
			cli: func(h *home) []string { return []string{"--cwd", h.root + "/../..", "--", ok, "0"} },
			mcp: func(*home) map[string]any { return map[string]any{"argv": []string{ok, "0"}, "cwd": "../.."} }},
		{name: "symlink escape", code: "cwd_escape",
			cli: func(h *home) []string { return []string{"--cwd", filepath.Join(h.root, "out"), "--", ok, "0"} },
			mcp: func(*home) map[string]any { return map[string]any{"argv": []string{ok, "0"}, "cwd": "out"} }},
		{name: "NUL byte in an argument", code: "nul_byte",
			// execve cannot carry a NUL byte: only an agent can send one.
			mcp: func(*home) map[string]any { return map[string]any{"argv": []string{ok, "0\x00; rm -rf /"}} }},
		{name: "timeout over the ceiling", code: "over_limit",
			cli: func(*home) []string { return []string{"--timeout", "1h", "--", ok, "0"} },
			mcp: func(*home) map[string]any {
				return map[string]any{"argv": []string{ok, "0"}, "timeout_ms": int64(time.Hour / time.Millisecond)}
			}},
		{name: "output cap over the ceiling", code: "over_limit",
			cli: func(*home) []string { return []string{"--max-output", "1GiB", "--", ok, "0"} },
			mcp: func(*home) map[string]any {
				return map[string]any{"argv": []string{ok, "0"}, "max_output_bytes": 1 << 30}
			}},
		{name: "no policy", code: "no_policy", noPolicy: true,
			cli: func(*home) []string { return []string{"--", ok, "0"} },
			mcp: func(*home) map[string]any { return map[string]any{"argv": []string{ok, "0"}} }},
	}
}

// refusalHomes makes the two homes the cases run in: one with the default
// policy (and a symlink out of its sandbox), one without any policy.
func refusalHomes(t *testing.T) (withPolicy, without *home) {
	withPolicy = newHome(t, "", defaultPolicy(t))
	require.NoError(t, os.Symlink(t.TempDir(), filepath.Join(withPolicy.root, "out")))
	return withPolicy, newHome(t, "", nil)
}

// TestRefusalsCLI drives every refusal through `bgcmd run`: exit 3, the
// code and the reason on stderr, no job created, the refusal recorded.
func TestRefusalsCLI(t *testing.T) {
	withPolicy, without := refusalHomes(t)
	for _, h := range []*home{withPolicy, without} {
		h.mustRun(0, "list") // create the database
	}
	var wantCodes = map[*home][]string{}
	for _, c := range refusalCases(t) {
		if c.cli == nil {
			continue
		}
		h := withPolicy
		if c.noPolicy {
			h = without
		}
		t.Run(c.name, func(t *testing.T) {
			res := h.mustRun(3, append([]string{"run"}, c.cli(h)...)...)
			msg := string(res.stderr)
			if c.code == "no_policy" {
				require.Contains(t, msg, "no policy", "%s", res)
				require.Contains(t, msg, filepath.Join(h.dir, "policy.toml"), "the message says where to create one")
			} else {
				require.Contains(t, msg, "refused ("+c.code+")", "%s", res)
				require.Contains(t, msg, "hint:", "a refusal says how to recover: %s", res)
			}
			require.Empty(t, res.stdout, "a refused start prints no job id")
		})
		wantCodes[h] = append(wantCodes[h], c.code)
	}
	// No job was created; every refusal is in the audit table.
	for _, h := range []*home{withPolicy, without} {
		st := h.openRO()
		jobs, err := queryInts(context.Background(), st, `SELECT COUNT(*) FROM jobs`)
		require.NoError(t, err)
		require.Equal(t, int64(0), jobs[0][0], "refused starts create no job")
		codes, err := queryStrings(context.Background(), st, `SELECT code FROM refusals ORDER BY at, rowid`)
		require.NoError(t, err)
		var got []string
		for _, r := range codes {
			got = append(got, r[0])
		}
		require.Equal(t, wantCodes[h], got, "refusals recorded for audit")
		require.NoError(t, st.Close())
	}
}

// TestRefusalsMCP drives every refusal through `bgcmd mcp` with the Go
// SDK's client: each is a tool error (isError) naming the code and how to
// recover, and the server keeps serving.
func TestRefusalsMCP(t *testing.T) {
	withPolicy, without := refusalHomes(t)
	sessions := map[*home]*mcp.ClientSession{}
	for _, h := range []*home{withPolicy, without} {
		sessions[h] = connectMCP(t, h)
	}
	for _, c := range refusalCases(t) {
		if c.mcp == nil {
			continue
		}
		h := withPolicy
		if c.noPolicy {
			h = without
		}
		t.Run(c.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			res, err := sessions[h].CallTool(ctx, &mcp.CallToolParams{Name: "run_command_bg", Arguments: c.mcp(h)})
			require.NoError(t, err, "a refusal is a tool error, not a protocol error")
			text := toolText(res)
			require.True(t, res.IsError, "isError for a refused start: %s", text)
			require.Contains(t, text, c.code, text)
			require.Contains(t, text, "To recover:", "the tool error says how to recover: %s", text)
		})
	}
	// The session survived every refusal: an allowed start still works.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := sessions[withPolicy].CallTool(ctx, &mcp.CallToolParams{Name: "run_command_bg",
		Arguments: map[string]any{"argv": []string{fixture(t, "exit-with.sh"), "0"}, "wait_ms": 30000}})
	require.NoError(t, err)
	require.False(t, res.IsError, toolText(res))
	require.Contains(t, toolText(res), `"exited"`)
	st := withPolicy.openRO()
	defer st.Close()
	jobs, err := queryInts(ctx, st, `SELECT COUNT(*) FROM jobs`)
	require.NoError(t, err)
	require.Equal(t, int64(1), jobs[0][0], "only the allowed start made a job")
}

// connectMCP starts `bgcmd mcp` for the home and connects the SDK's client;
// the cleanup closes the session and waits for the server to exit.
func connectMCP(t *testing.T, h *home) *mcp.ClientSession {
	t.Helper()
	cmd := exec.Command(h.bin, "mcp")
	cmd.Env = h.environ()
	cmd.Dir = h.root
	cmd.Stderr = &strings.Builder{}
	client := mcp.NewClient(&mcp.Implementation{Name: "bgcmd-soak", Version: "v0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd}, nil)
	require.NoError(t, err)
	t.Cleanup(func() {
		cs.Close()
		_ = cmd.Wait()
		if t.Failed() {
			t.Logf("bgcmd mcp stderr:\n%s", cmd.Stderr)
		}
	})
	return cs
}

// toolText joins a tool result's text content.
func toolText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(*mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}
