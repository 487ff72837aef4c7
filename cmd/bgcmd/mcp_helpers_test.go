package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/agenttools"
	"github.com/bgcmd/bgcmd/internal/testkit"
)

// mcpBinary is the real bgcmd binary, built once by TestMain
// (e2e_main_test.go).
func mcpBinary(t testing.TB) string {
	t.Helper()
	require.NotEmpty(t, binary, "TestMain builds the bgcmd binary")
	return binary
}

// mcpFixture returns the absolute path of a testdata script.
func mcpFixture(t testing.TB, name string) string {
	t.Helper()
	_, file, _, _ := runtime.Caller(0)
	p, err := filepath.Abs(filepath.Join(filepath.Dir(file), "..", "..", "testdata", name))
	require.NoError(t, err)
	return p
}

// mcpEnv is a temporary home with a policy file allowing the testdata
// scripts under a temporary sandbox root.
type mcpEnv struct {
	home, root, policy string
}

func newMCPEnv(t *testing.T) *mcpEnv {
	t.Helper()
	e := &mcpEnv{home: t.TempDir()}
	testkit.Cleanup(t, e.home) // after TempDir: runs before the removal
	root, err := filepath.EvalSymlinks(t.TempDir())
	require.NoError(t, err)
	e.root = root
	var allowed []string
	for _, f := range []string{"exit-with.sh", "ignore-term.sh", "print-bytes.sh", "slow-lines.sh", "wait-for-file.sh"} {
		allowed = append(allowed, fmt.Sprintf("%q", mcpFixture(t, f)))
	}
	e.policy = filepath.Join(e.home, "policy.toml")
	require.NoError(t, os.WriteFile(e.policy, []byte(fmt.Sprintf(
		"allowed_executables = [%s]\ncwd_root = %q\ndefault_timeout = \"10m\"\nkill_grace = \"1s\"\n",
		strings.Join(allowed, ", "), root)), 0o600))
	return e
}

// mcpServer is one running `bgcmd mcp` driven by the go-sdk client over
// its stdin and stdout.
type mcpServer struct {
	t      *testing.T
	cmd    *exec.Cmd
	cs     *mcp.ClientSession
	stderr *mcpLog
}

// start runs `bgcmd mcp` on the env as session "agent-1" (plus args) and
// connects the client.
func (e *mcpEnv) start(t *testing.T, args ...string) *mcpServer {
	t.Helper()
	cmd := exec.Command(mcpBinary(t), append([]string{"mcp"}, args...)...)
	cmd.Env = append(os.Environ(), "BGCMD_HOME="+e.home, "BGCMD_POLICY="+e.policy, "BGCMD_SESSION=agent-1")
	s := &mcpServer{t: t, cmd: cmd, stderr: &mcpLog{}}
	cmd.Stderr = s.stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "bgcmd-test", Version: "v0"}, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	require.NoError(t, err, "connect to bgcmd mcp; its stderr:\n%s", s.stderr)
	s.cs = cs
	t.Cleanup(func() { cs.Close() })
	return s
}

// call calls a tool and returns the raw result; a protocol error fails the
// test.
func (s *mcpServer) call(name string, args any) *mcp.CallToolResult {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := s.cs.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(s.t, err, "%s: protocol error; server stderr:\n%s", name, s.stderr)
	require.Len(s.t, res.Content, 1, name)
	_, isText := res.Content[0].(*mcp.TextContent)
	require.True(s.t, isText, "%s: content is %T", name, res.Content[0])
	return res
}

// killAtEnd kills the task when the test ends, so that a test that fails
// early leaves no process behind.
func (s *mcpServer) killAtEnd(id string) {
	s.t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		s.cs.CallTool(ctx, &mcp.CallToolParams{Name: "command_kill",
			Arguments: map[string]any{"task_id": id, "signal": "SIGKILL"}})
	})
}

// mcpOK calls a tool that must succeed and decodes its structured result.
func mcpOK[T any](s *mcpServer, name string, args any) *T {
	s.t.Helper()
	res := s.call(name, args)
	text := res.Content[0].(*mcp.TextContent).Text
	require.False(s.t, res.IsError, "%s failed: %s", name, text)
	v := new(T)
	s.decode(res, v)
	require.NoError(s.t, json.Unmarshal([]byte(text), new(T)), "the text of a success is its JSON")
	return v
}

// fail calls a tool that must fail with a tool error and returns it with
// the error text.
func (s *mcpServer) fail(name string, args any) (*agenttools.ToolError, string) {
	s.t.Helper()
	res := s.call(name, args)
	text := res.Content[0].(*mcp.TextContent).Text
	require.True(s.t, res.IsError, "%s should have failed: %s", name, text)
	var er struct {
		Error    *agenttools.ToolError `json:"error"`
		Counters *struct{}             `json:"counters"`
	}
	s.decode(res, &er)
	require.NotNil(s.t, er.Error, text)
	require.NotNil(s.t, er.Counters, "a tool error carries the counters too")
	require.Contains(s.t, text, "To recover: ")
	return er.Error, text
}

// decode re-decodes the client's structured content into v.
func (s *mcpServer) decode(res *mcp.CallToolResult, v any) {
	s.t.Helper()
	b, err := json.Marshal(res.StructuredContent)
	require.NoError(s.t, err)
	require.NoError(s.t, json.Unmarshal(b, v), "structured content: %s", b)
}

// mcpWaitFor polls cond until it holds or the deadline passes.
func mcpWaitFor(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(pollDeadline)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// mcpLog collects a server's stderr safely across goroutines.
type mcpLog struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *mcpLog) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *mcpLog) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}
