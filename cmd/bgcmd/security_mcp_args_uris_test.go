//go:build !bgcmd_lean

package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"
)

// TestMCPRepeatedArgumentIsRefused is the argument-smuggling exploit
// through the real binary: a tools/call whose arguments repeat a key with
// null last. The SDK hands the arguments through as raw JSON, so the tool
// layer must refuse the call rather than check null and run with the
// earlier, out-of-range value.
func TestMCPRepeatedArgumentIsRefused(t *testing.T) {
	t.Parallel()
	s := startRawMCP(t)
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"v0"}}}`)
	require.Contains(t, s.next(), "result")
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	script := mcpFixture(t, "exit-with.sh")
	call := func(id int, args string) map[string]any {
		t.Helper()
		s.send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/call","params":` + args + `}`)
		m := s.next()
		res, ok := m["result"].(map[string]any)
		require.True(t, ok, "%v", m)
		return res
	}
	for i, args := range []string{
		`{"name":"command_list","arguments":{"limit":500,"limit":null}}`,
		`{"name":"run_command_bg","arguments":{"argv":["` + script + `","0"],"priority":999999,"priority":null}}`,
		`{"name":"run_command_bg","arguments":{"argv":["` + script + `","0"],"wait_ms":86400000,"wait_\u006ds":null}}`,
	} {
		res := call(2+i, args)
		require.Equal(t, true, res["isError"], "%s: %v", args, res)
		text := res["content"].([]any)[0].(map[string]any)["text"].(string)
		require.Contains(t, text, "more than once", args)
	}
	res := call(9, `{"name":"command_list","arguments":{}}`)
	require.NotEqual(t, true, res["isError"], "%v", res)
	require.Empty(t, res["structuredContent"].(map[string]any)["commands"], "a refused call started nothing")
}

// TestMCPNearMissResourceURIsOfAnotherSession: resources/read and
// resources/subscribe with URIs that are near misses of another session's
// job or session (case, a path, a query, percent-encoding, a trailing
// slash) answer not found, and a subscription to one never reports its
// settle.
func TestMCPNearMissResourceURIsOfAnotherSession(t *testing.T) {
	t.Parallel()
	e := newMCPEnv(t)
	ws := e.startWatched(t) // session agent-1
	gate := filepath.Join(e.root, "go")
	t.Cleanup(func() { os.WriteFile(gate, nil, 0o600) })
	other := e.cli(t, "other", "run", "--", mcpFixture(t, "wait-for-file.sh"), gate, "0")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	uris := []string{
		"bgcmd://jobs/" + strings.ToUpper(other),
		"BGCMD://jobs/" + other,
		"bgcmd://JOBS/" + other,
		"bgcmd://jobs/" + other + "/",
		"bgcmd://jobs/" + other + "?session=agent-1",
		"bgcmd://jobs/" + other + "#x",
		"bgcmd://jobs/./" + other,
		"bgcmd://sessions/agent-1/../../jobs/" + other,
		"bgcmd://jobs/" + fmt.Sprintf("%%%02X", other[0]) + other[1:],
		"bgcmd://jobs/" + other[:8],
		"bgcmd://sessions/agent-1/../other",
		"bgcmd://sessions/agent-1%2F..%2Fother",
		"bgcmd://sessions/Other",
		"bgcmd://sessions/other/",
		"bgcmd://sessions/",
		"bgcmd://sessions/agent-1?x=other",
	}
	for _, uri := range uris {
		_, err := ws.cs.ReadResource(ctx, &mcp.ReadResourceParams{URI: uri})
		require.Error(t, err, uri)
		require.NotContains(t, err.Error(), `"state"`, uri)
		_ = ws.cs.Subscribe(ctx, &mcp.SubscribeParams{URI: uri})
	}
	require.NoError(t, os.WriteFile(gate, nil, 0o600))
	e.cli(t, "other", "wait", other)
	e.awaitOwnUpdate(t, ws, func(got string) {
		require.NotContains(t, strings.ToLower(got), strings.ToLower(other), "another session's settle was reported")
		require.NotContains(t, strings.ToLower(got), "other", "another session was reported")
	})
}
