package main

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd"
)

// watchedServer is a `bgcmd mcp` whose client records resource updates and
// progress notifications.
type watchedServer struct {
	*mcpServer
	env      *mcpEnv
	updates  chan string
	progress chan string
}

func (e *mcpEnv) startWatched(t *testing.T) *watchedServer {
	t.Helper()
	ws := &watchedServer{updates: make(chan string, 64), progress: make(chan string, 64)}
	cmd := exec.Command(mcpBinary(t), "mcp")
	cmd.Env = append(os.Environ(), "BGCMD_HOME="+e.home, "BGCMD_POLICY="+e.policy, "BGCMD_SESSION=agent-1")
	s := &mcpServer{t: t, cmd: cmd, stderr: &mcpLog{}}
	cmd.Stderr = s.stderr
	client := mcp.NewClient(&mcp.Implementation{Name: "bgcmd-test", Version: "v0"}, &mcp.ClientOptions{
		ResourceUpdatedHandler: func(_ context.Context, req *mcp.ResourceUpdatedNotificationRequest) {
			select {
			case ws.updates <- req.Params.URI:
			default:
			}
		},
		ProgressNotificationHandler: func(_ context.Context, req *mcp.ProgressNotificationClientRequest) {
			select {
			case ws.progress <- req.Params.Message:
			default:
			}
		},
	})
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	cs, err := client.Connect(ctx, &mcp.CommandTransport{Command: cmd, TerminateDuration: 5 * time.Second}, nil)
	require.NoError(t, err, "connect to bgcmd mcp; its stderr:\n%s", s.stderr)
	s.cs = cs
	t.Cleanup(func() { cs.Close() })
	ws.mcpServer = s
	ws.env = e
	return ws
}

// cli runs the bgcmd CLI on the env as session (another process than the
// server) and returns its stdout.
func (e *mcpEnv) cli(t *testing.T, session string, args ...string) string {
	t.Helper()
	cmd := exec.Command(mcpBinary(t), args...)
	cmd.Dir = e.root
	cmd.Env = append(os.Environ(), "BGCMD_HOME="+e.home, "BGCMD_POLICY="+e.policy, "BGCMD_SESSION="+session)
	out, err := cmd.Output()
	require.NoError(t, err, "bgcmd %v: %s", args, out)
	return strings.TrimSpace(string(out))
}

func (ws *watchedServer) subscribe(uri string) {
	ws.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	logged := `msg="resource subscribed" uri=` + uri
	before := strings.Count(ws.stderr.String(), logged)
	require.NoError(ws.t, ws.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri}), "subscribe %s; stderr:\n%s", uri, ws.stderr)
	// With this protocol version the call may return before the server
	// has registered the subscription: wait until it says it has, so that
	// what the test does next is seen by a subscriber.
	mcpWaitFor(ws.t, "the server to register the subscription to "+uri, func() bool {
		return strings.Count(ws.stderr.String(), logged) > before
	})
}

// expectUpdate waits for an update of uri.
func (ws *watchedServer) expectUpdate(uri string) {
	ws.t.Helper()
	deadline := time.After(time.Minute)
	for {
		select {
		case got := <-ws.updates:
			if got == uri {
				return
			}
		case <-deadline:
			job := "(not a job)"
			if id, ok := strings.CutPrefix(uri, "bgcmd://jobs/"); ok {
				cmd := exec.Command(mcpBinary(ws.t), "--json", "status", id)
				cmd.Env = append(os.Environ(), "BGCMD_HOME="+ws.env.home, "BGCMD_SESSION=agent-1")
				out, err := cmd.CombinedOutput()
				job = fmt.Sprintf("%s (%v)", out, err)
			}
			ws.t.Fatalf("no notifications/resources/updated for %s; the job: %s; server stderr:\n%s", uri, job, ws.stderr)
		}
	}
}

func TestMCPSubscriberIsToldWhenACLIJobSettles(t *testing.T) {
	t.Parallel()
	e := newMCPEnv(t)
	ws := e.startWatched(t)
	init := ws.cs.InitializeResult()
	require.NotNil(t, init.Capabilities.Resources)
	require.True(t, init.Capabilities.Resources.Subscribe, "the server declares resources.subscribe")

	gate := filepath.Join(e.root, "go")
	t.Cleanup(func() { os.WriteFile(gate, nil, 0o600) })
	id := e.cli(t, "agent-1", "run", "--", mcpFixture(t, "wait-for-file.sh"), gate, "7")
	ws.subscribe("bgcmd://jobs/" + id)
	ws.subscribe("bgcmd://sessions/agent-1")
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	ws.expectUpdate("bgcmd://jobs/" + id)
	ws.expectUpdate("bgcmd://sessions/agent-1")

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := ws.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "bgcmd://jobs/" + id})
	require.NoError(t, err)
	var st bgcmd.Status
	require.NoError(t, json.Unmarshal([]byte(res.Contents[0].Text), &st))
	require.Equal(t, bgcmd.StateExited, st.State)
	require.Equal(t, 7, *st.ExitCode)
	res, err = ws.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: "bgcmd://sessions/agent-1"})
	require.NoError(t, err)
	var sv struct {
		Session  string            `json:"session"`
		Counters bgcmd.Counters    `json:"counters"`
		Running  []json.RawMessage `json:"running"`
	}
	require.NoError(t, json.Unmarshal([]byte(res.Contents[0].Text), &sv))
	require.Equal(t, "agent-1", sv.Session)
	require.Empty(t, sv.Running)
}

func TestMCPSubscriberIsToldAfterAServerRestartAndAReconcile(t *testing.T) {
	t.Parallel()
	e := newMCPEnv(t)
	gate := filepath.Join(e.root, "go")
	t.Cleanup(func() { os.WriteFile(gate, nil, 0o600) })
	id := e.cli(t, "agent-1", "run", "--", mcpFixture(t, "wait-for-file.sh"), gate, "0")
	first := e.startWatched(t)
	first.subscribe("bgcmd://jobs/" + id)
	require.NoError(t, first.cs.Close())

	second := e.startWatched(t)
	second.subscribe("bgcmd://jobs/" + id)
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	second.expectUpdate("bgcmd://jobs/" + id)

	// A job whose supervisor is SIGKILLed is settled by reconcile in
	// another process: the subscriber is told all the same.
	orphan := e.cli(t, "agent-1", "run", "--", mcpFixture(t, "wait-for-file.sh"), filepath.Join(e.root, "never"))
	second.subscribe("bgcmd://jobs/" + orphan)
	var s bgcmd.Status
	require.NoError(t, json.Unmarshal([]byte(e.cli(t, "agent-1", "--json", "status", orphan)), &s))
	require.NoError(t, syscall.Kill(s.SupervisorPID, syscall.SIGKILL))
	mcpWaitFor(t, "the supervisor to die", func() bool { return isZombie(s.SupervisorPID) })
	e.cli(t, "agent-1", "reconcile")
	second.expectUpdate("bgcmd://jobs/" + orphan)
}

func TestMCPResourcesOfAnotherSessionAreUnknown(t *testing.T) {
	t.Parallel()
	e := newMCPEnv(t)
	ws := e.startWatched(t)
	gate := filepath.Join(e.root, "go")
	t.Cleanup(func() { os.WriteFile(gate, nil, 0o600) })
	other := e.cli(t, "other", "run", "--", mcpFixture(t, "wait-for-file.sh"), gate, "0")
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, uri := range []string{"bgcmd://jobs/" + other, "bgcmd://sessions/other",
		"bgcmd://jobs/01900000-0000-7000-8000-000000000000"} {
		_, err := ws.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		require.ErrorContains(t, err, "not found", uri)
	}
	// A subscription to another session's job or session is refused (with
	// this protocol version the refusal is not the Subscribe call's result):
	// its settle is never reported, while this session's is.
	_ = ws.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "bgcmd://jobs/" + other})
	_ = ws.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: "bgcmd://sessions/other"})
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	var st bgcmd.Status
	require.NoError(t, json.Unmarshal([]byte(e.cli(t, "other", "--json", "wait", other)), &st))
	e.awaitOwnUpdate(t, ws, func(got string) {
		require.NotContains(t, got, other, "another session's settle was reported")
		require.NotEqual(t, "bgcmd://sessions/other", got)
	})
}

// awaitOwnUpdate runs a job in ws's session (agent-1), subscribes to it and
// lets it settle, then reads ws's updates until that job's arrives, passing
// each one before it to check (which fails on one about another session).
func (e *mcpEnv) awaitOwnUpdate(t *testing.T, ws *watchedServer, check func(uri string)) {
	t.Helper()
	own := e.cli(t, "agent-1", "run", "--", mcpFixture(t, "wait-for-file.sh"), filepath.Join(e.root, "own"), "0")
	ws.subscribe("bgcmd://jobs/" + own)
	require.NoError(t, os.WriteFile(filepath.Join(e.root, "own"), nil, 0o600))
	deadline := time.After(time.Minute)
	for {
		select {
		case got := <-ws.updates:
			check(got)
			if got == "bgcmd://jobs/"+own {
				return
			}
		case <-deadline:
			t.Fatalf("no update for this session's job; stderr:\n%s", ws.stderr)
		}
	}
}

func TestMCPCommandWaitSendsProgress(t *testing.T) {
	t.Parallel()
	e := newMCPEnv(t)
	ws := e.startWatched(t)
	gate := filepath.Join(e.root, "go")
	t.Cleanup(func() { os.WriteFile(gate, nil, 0o600) })
	id := e.cli(t, "agent-1", "run", "--", mcpFixture(t, "wait-for-file.sh"), gate, "0")
	done := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		p := &mcp.CallToolParams{Name: "command_wait", Arguments: map[string]any{"task_id": id, "timeout_ms": 60000}}
		p.SetProgressToken("wait-1")
		_, err := ws.cs.CallTool(ctx, p)
		done <- err
	}()
	select {
	case msg := <-ws.progress:
		require.Contains(t, msg, "stdout 8 bytes")
	case <-time.After(time.Minute):
		t.Fatalf("no progress notification; stderr:\n%s", ws.stderr)
	}
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	require.NoError(t, <-done)
}
