//go:build !bgcmd_lean

package main

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// initRaw initializes a raw session at protocol version v.
func initRaw(t *testing.T, s *rawMCP, v string) {
	t.Helper()
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"` + v + `","capabilities":{},"clientInfo":{"name":"raw","version":"v0"}}}`)
	init := s.next()
	require.Contains(t, init, "result", "%v", init)
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
}

// requireStillServes sends tools/list with id and requires its answer: the
// server did not end the session.
func requireStillServes(t *testing.T, s *rawMCP, id int) {
	t.Helper()
	s.send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(id) + `,"method":"tools/list"}`)
	for {
		m := s.next() // fails "the server closed stdout" once it has stopped
		if m["id"] == float64(id) {
			require.Contains(t, m, "result", "%v", m)
			return
		}
	}
}

// The frame guard passed a well-formed batch on to the SDK, whose reader
// then ended the whole session, and `bgcmd mcp` exited: any batch under
// protocol 2025-06-18 (MCP dropped batches), and one repeating a request
// id under 2025-03-26. Every batch is now answered -32600, and the server
// goes on.
func TestMCPAWellFormedBatchIsAnsweredAndTheServerGoesOn(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ name, version, frame string }{
		{"one request at 2025-06-18", "2025-06-18", `[{"jsonrpc":"2.0","id":2,"method":"ping"}]`},
		{"one notification at 2025-06-18", "2025-06-18", `[{"jsonrpc":"2.0","method":"notifications/initialized"}]`},
		{"an id twice at 2025-03-26", "2025-03-26", `[{"jsonrpc":"2.0","id":2,"method":"ping"},{"jsonrpc":"2.0","id":2,"method":"ping"}]`},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			s := startRawMCP(t)
			initRaw(t, s, c.version)
			s.send(c.frame)
			s.requireError(-32600, c.frame)
			requireStillServes(t, s, 77)
		})
	}
}

// peakKiB returns the peak resident set (VmHWM) of pid in KiB.
func peakKiB(t *testing.T, pid int) int {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	require.NoError(t, err)
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "VmHWM:") {
			n, err := strconv.Atoi(strings.Fields(l)[1])
			require.NoError(t, err)
			return n
		}
	}
	t.Fatal("no VmHWM in /proc/PID/status")
	return 0
}

// An integer argument written with a huge exponent ("1e646000000", eleven
// bytes of valid JSON) was made an integer of two billion bits before it
// was compared with its bound: a few such calls took the server from tens
// of MiB to a GiB, and enough of them to an out-of-memory kill. Refusing
// it must allocate nothing of that size.
func TestMCPAHugeIntegerArgumentIsRefusedCheaply(t *testing.T) {
	t.Parallel()
	s := startRawMCP(t)
	initRaw(t, s, "2025-06-18")
	pid := s.cmd.Process.Pid
	before := peakKiB(t, pid)
	const calls = 4
	for i := range calls {
		s.send(`{"jsonrpc":"2.0","id":` + strconv.Itoa(100+i) + `,"method":"tools/call","params":{"name":"command_list","arguments":{"limit":1e646000000}}}`)
	}
	for got := 0; got < calls; {
		m := s.next()
		if res, ok := m["result"].(map[string]any); ok {
			require.Equal(t, true, res["isError"], "%v", m)
			require.Contains(t, fmt.Sprint(res["content"]), "above its maximum", "%v", m)
			got++
		}
	}
	peak := peakKiB(t, pid)
	require.Less(t, peak, before+100<<10, "refusing an out-of-range integer took the peak RSS from %d to %d KiB", before, peak)
	requireStillServes(t, s, 7)
}
