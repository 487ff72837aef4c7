//go:build !bgcmd_lean

package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// maxMCPFrameBytes bounds one inbound MCP frame (one line of JSON). Tool
// arguments are far smaller; a bigger frame is answered -32600 and
// skipped.
const maxMCPFrameBytes = 4 << 20

// frameTransport is the stdio transport of `bgcmd mcp` with a guard in
// front of the SDK: every inbound line is checked (size, JSON, JSON-RPC
// shape) before the SDK sees it, and a bad one is answered with a JSON-RPC
// error (-32700 parse error, -32600 invalid request; id null) instead of
// ending the session, as the SDK's own reader would. Good frames pass
// through unchanged. The answers and the SDK's messages share one writer
// that writes each frame whole, so they never interleave.
type frameTransport struct {
	in    io.Reader
	out   io.Writer
	limit int
	log   *slog.Logger
}

// Connect starts the guard and connects the SDK's newline-delimited JSON
// transport to its output.
func (t *frameTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	pr, pw := io.Pipe()
	w := &frameWriter{w: t.out}
	go t.guard(pw, w)
	return (&mcp.IOTransport{Reader: pr, Writer: w}).Connect(ctx)
}

// guard copies good frames from t.in to pw and answers bad ones on w. It
// closes pw when t.in ends (the SDK then sees EOF) or fails.
func (t *frameTransport) guard(pw *io.PipeWriter, w *frameWriter) {
	br := bufio.NewReaderSize(t.in, 64<<10)
	var frame []byte
	over := false
	for {
		chunk, err := br.ReadSlice('\n')
		if !over && len(frame)+len(chunk) > t.limit+1 { // +1: the newline
			over, frame = true, frame[:0]
		}
		if !over {
			frame = append(frame, chunk...)
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		if err == nil || (errors.Is(err, io.EOF) && (over || len(frame) > 0)) {
			if werr := t.pass(frame, over, pw, w); werr != nil {
				pw.CloseWithError(werr)
				return
			}
			frame, over = frame[:0], false
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				err = nil
			}
			pw.CloseWithError(err)
			return
		}
	}
}

// pass hands one frame to the SDK, or answers it when it is bad. Blank
// lines are skipped.
func (t *frameTransport) pass(frame []byte, over bool, pw io.Writer, w *frameWriter) error {
	if over {
		return t.answer(w, jsonrpc.CodeInvalidRequest,
			fmt.Sprintf("invalid request: a frame is at most %d bytes; this one is larger and was skipped", t.limit))
	}
	body := bytes.TrimSpace(frame)
	if len(body) == 0 {
		return nil
	}
	if !json.Valid(body) {
		return t.answer(w, jsonrpc.CodeParseError, "parse error: the frame is not one valid JSON value")
	}
	if reason := badShape(body); reason != "" {
		return t.answer(w, jsonrpc.CodeInvalidRequest, "invalid request: "+reason)
	}
	_, err := pw.Write(append(body, '\n'))
	return err
}

// answer writes a JSON-RPC error with a null id and logs it.
func (t *frameTransport) answer(w *frameWriter, code int, msg string) error {
	if t.log != nil {
		t.log.Warn("bad MCP frame answered", "code", code, "error", msg)
	}
	b, err := json.Marshal(frameError{JSONRPC: "2.0", Error: frameErrorBody{Code: code, Message: msg}})
	if err != nil {
		return err
	}
	_, err = w.Write(append(b, '\n'))
	return err
}

// frameError is a JSON-RPC error answer; its id is always null, since the
// frame it answers could not be read as a request.
type frameError struct {
	JSONRPC string         `json:"jsonrpc"`
	ID      *int           `json:"id"`
	Error   frameErrorBody `json:"error"`
}

// frameErrorBody is the error object of a frameError.
type frameErrorBody struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

// badShape says why a valid JSON value is not a JSON-RPC 2.0 message the
// SDK can take, or returns "". Every batch is refused: MCP dropped them
// (2025-06-18), and the SDK's reader ends the whole session on a batch it
// cannot take (any batch under that version; one that repeats an id, or
// names one still in flight, under an earlier one).
func badShape(body []byte) string {
	if body[0] == '[' {
		return "a batch; bgcmd mcp takes one message per frame (MCP has no batches since 2025-06-18)"
	}
	return badMessage(body)
}

// badMessage says why one JSON value is not a JSON-RPC 2.0 request,
// notification or response, or returns "".
func badMessage(raw json.RawMessage) string {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return "a message is a JSON object"
	}
	if string(fields["jsonrpc"]) != `"2.0"` {
		return `"jsonrpc" must be "2.0"`
	}
	msg, err := jsonrpc.DecodeMessage(raw)
	if err != nil {
		return err.Error()
	}
	switch m := msg.(type) {
	case *jsonrpc.Request:
		if m.Method == "" {
			return `"method" must be a non-empty string`
		}
		if p := bytes.TrimSpace(m.Params); len(p) > 0 && p[0] != '{' && p[0] != '[' && string(p) != "null" {
			return `"params" must be an object or an array`
		}
	case *jsonrpc.Response:
		_, hasResult := fields["result"]
		_, hasError := fields["error"]
		if hasResult == hasError {
			return `a response has exactly one of "result" and "error"`
		}
	}
	return ""
}

// frameWriter writes each frame with one Write to w, one at a time: the
// SDK writes a whole frame per call, and so does the guard.
type frameWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (f *frameWriter) Write(p []byte) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.w.Write(p)
}

// Close does nothing: stdout stays open for the process's lifetime.
func (f *frameWriter) Close() error { return nil }
