//go:build !bgcmd_lean

package main

import (
	"bufio"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// rawMCP is a `bgcmd mcp` driven with raw newline-delimited frames.
type rawMCP struct {
	t     *testing.T
	in    io.WriteCloser
	lines chan string
	cmd   *exec.Cmd
}

func startRawMCP(t *testing.T) *rawMCP {
	t.Helper()
	e := newMCPEnv(t)
	cmd := exec.Command(mcpBinary(t), "mcp")
	cmd.Env = append(os.Environ(), "BGCMD_HOME="+e.home, "BGCMD_POLICY="+e.policy, "BGCMD_SESSION=raw")
	stderr := &mcpLog{}
	cmd.Stderr = stderr
	in, err := cmd.StdinPipe()
	require.NoError(t, err)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	s := &rawMCP{t: t, in: in, lines: make(chan string, 16), cmd: cmd}
	go func() {
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 64<<20)
		for sc.Scan() {
			s.lines <- sc.Text()
		}
		close(s.lines)
	}()
	t.Cleanup(func() {
		in.Close()
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			t.Logf("bgcmd mcp stderr:\n%s", stderr)
		}
	})
	return s
}

// send writes one frame (a newline is added).
func (s *rawMCP) send(frame string) {
	s.t.Helper()
	_, err := io.WriteString(s.in, frame+"\n")
	require.NoError(s.t, err, "the server stopped reading")
}

// next reads the next frame the server writes, as a JSON object.
func (s *rawMCP) next() map[string]any {
	s.t.Helper()
	select {
	case line, ok := <-s.lines:
		require.True(s.t, ok, "the server closed stdout: it stopped")
		var m map[string]any
		require.NoError(s.t, json.Unmarshal([]byte(line), &m), "the server wrote a frame that is not JSON: %q", line)
		return m
	case <-time.After(60 * time.Second):
		s.t.Fatal("no answer from the server")
		return nil
	}
}

// requireError requires the next frame to be a JSON-RPC error with code
// and a null id.
func (s *rawMCP) requireError(code float64, what string) {
	s.t.Helper()
	m := s.next()
	require.Equal(s.t, "2.0", m["jsonrpc"], what)
	require.Contains(s.t, m, "id", what)
	require.Nil(s.t, m["id"], "%s: the id of an unreadable frame is null", what)
	e, ok := m["error"].(map[string]any)
	require.True(s.t, ok, "%s: not an error answer: %v", what, m)
	require.Equal(s.t, code, e["code"], "%s: %v", what, e)
	require.NotEmpty(s.t, e["message"], what)
}

// TestMCPBadFramesAreAnsweredAndTheServerGoesOn is the exploit of the MCP
// transport: malformed JSON, frames of the wrong JSON-RPC shape and a frame
// over the size limit each get a JSON-RPC error (-32700 or -32600, id
// null), and the server keeps serving: tools/list still answers.
func TestMCPBadFramesAreAnsweredAndTheServerGoesOn(t *testing.T) {
	t.Parallel()
	s := startRawMCP(t)
	s.send(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"raw","version":"v0"}}}`)
	init := s.next()
	require.Equal(t, 1.0, init["id"])
	require.Contains(t, init, "result")
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)

	for _, frame := range []string{
		`this is not json`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"`,
		`{"jsonrpc":"2.0","id":2,"method":"tools/list"}{"jsonrpc":"2.0","id":3,"method":"tools/list"}`,
		"\x00\xff\xfe",
	} {
		s.send(frame)
		s.requireError(-32700, frame)
	}
	for _, frame := range []string{
		`"a string"`,
		`42`,
		`null`,
		`[]`,
		`[1, 2]`,
		`{}`,
		`{"jsonrpc":"1.0","id":4,"method":"tools/list"}`,
		`{"id":4,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":{"a":1},"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":true,"method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":4,"method":7}`,
		`{"jsonrpc":"2.0","id":4}`,
		`{"jsonrpc":"2.0","method":"tools/list","id":4,"params":"x"}`,
	} {
		s.send(frame)
		s.requireError(-32600, frame)
	}
	s.send(`{"jsonrpc":"2.0","id":5,"method":"tools/list","params":{"pad":"` + strings.Repeat("x", maxMCPFrameBytes) + `"}}`)
	s.requireError(-32600, "a frame over the size limit")

	// Well-formed JSON-RPC that makes no sense to MCP is the SDK's to
	// answer; it must not end the session either.
	s.send(`{"jsonrpc":"2.0","id":99,"result":{}}`) // a response nobody asked for: no answer
	for id, frame := range map[float64]string{
		7: `{"jsonrpc":"2.0","id":7,"method":"no/such/method"}`,
		8: `{"jsonrpc":"2.0","id":8,"method":"tools/call","params":[1]}`,
		9: `{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"command_status","arguments":"x"}}`,
	} {
		s.send(frame)
		m := s.next()
		require.Equal(t, id, m["id"], "%s: %v", frame, m)
	}
	s.send(`{"jsonrpc":"2.0","id":6,"method":"tools/list"}`)
	list := s.next()
	require.Equal(t, 6.0, list["id"], "the server still serves: %v", list)
	res, ok := list["result"].(map[string]any)
	require.True(t, ok, "%v", list)
	require.NotEmpty(t, res["tools"])
}
