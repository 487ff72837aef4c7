package agenttools

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
)

// Page sizes of command_output, smaller than the reader's so that a page
// fits comfortably in a model's context.
const (
	// DefaultOutputBytes is the limit of a bytes or chars page when none
	// is given.
	DefaultOutputBytes = 16 << 10
	// MaxOutputBytes bounds the limit of a bytes or chars page.
	MaxOutputBytes = 256 << 10
	// DefaultOutputLines is the limit of a lines page when none is given.
	DefaultOutputLines = 200
	// MaxOutputLines bounds the limit of a lines page and tail.
	MaxOutputLines = 5000
	// maxFilter bounds the length of a filter pattern.
	maxFilter = 1000
)

type outputArgs struct {
	TaskID string `json:"task_id"`
	Stream string `json:"stream"`
	Unit   string `json:"unit"`
	Offset int64  `json:"offset"`
	Limit  int64  `json:"limit"`
	Tail   int64  `json:"tail"`
	Filter string `json:"filter"`
	Raw    bool   `json:"raw"`
}

func (t *Toolset) outputDef() *def {
	return &def{
		Tool: Tool{
			Name:  "command_output",
			Title: "Read a background command's output",
			Description: fmt.Sprintf(`Read one page of a command's stdout or stderr, while it runs or after it ended; nothing is ever lost or consumed, so pages can be read again.

A page is limit units from offset (unit "bytes", "chars" or "lines"; offsets start at 0). Follow next_offset for the next page while has_more is true (has_more stays true while the command runs). Alternatively: tail = the last N lines; filter = only the lines matching a Go regular expression (RE2), returned in matches with 1-based line numbers, scanning from line offset (or within the last tail lines) for at most %s per call (scan_capped: it stopped early; continue from next_offset); raw = the exact bytes as data_base64 instead of text.

Limits: limit defaults to %d bytes or chars, or %d lines; at most %d bytes or chars, or %d lines (tail too). Reading a command that has ended clears it from the finished counter.

Examples: {"task_id": "…", "stream": "stderr", "tail": 50}; {"task_id": "…", "stream": "stdout", "unit": "lines", "offset": 200, "limit": 200}; {"task_id": "…", "stream": "stdout", "filter": "FAIL|panic"}`,
				artifacts.GrepBudget, DefaultOutputBytes, DefaultOutputLines, MaxOutputBytes, MaxOutputLines),
			Annotations: Annotations{ReadOnly: true},
		},
		props: []prop{taskIDProp,
			{name: "stream", typ: "string", required: true, enum: []string{"stdout", "stderr"},
				desc: `which stream to read: "stdout" or "stderr"`},
			{name: "unit", typ: "string", enum: []string{"bytes", "chars", "lines"},
				desc: `what offset and limit count: "bytes" (default), "chars" (Unicode characters) or "lines"`},
			{name: "offset", typ: "integer", min: 0, max: 1 << 50,
				desc: "where the page starts, in unit, from 0; pass the previous page's next_offset to continue"},
			{name: "limit", typ: "integer", min: 0, max: MaxOutputBytes,
				desc: fmt.Sprintf("how many units the page holds at most; 0 or absent means the default; at most %d lines", MaxOutputLines)},
			{name: "tail", typ: "integer", min: 0, max: MaxOutputLines,
				desc: "return the last N lines instead of a page from offset"},
			{name: "filter", typ: "string", maxLen: maxFilter,
				desc: `return only the lines matching this Go (RE2) regular expression, e.g. "error|FAIL"`},
			{name: "raw", typ: "boolean",
				desc: "return the page's exact bytes base64-encoded in data_base64 instead of text (not with filter)"},
		},
		call: t.output,
	}
}

func (t *Toolset) output(ctx context.Context, raw json.RawMessage) (counted, error) {
	var a outputArgs
	if err := decode(raw, &a); err != nil {
		return nil, err
	}
	page := artifacts.Page{Unit: artifacts.Unit(a.Unit), Offset: a.Offset, Limit: a.Limit,
		Tail: a.Tail, Grep: a.Filter, Raw: a.Raw}
	lines := page.Unit == artifacts.UnitLines || a.Tail > 0 || a.Filter != ""
	switch {
	case lines && a.Limit > MaxOutputLines:
		return nil, invalid(fmt.Sprintf("pass a limit of at most %d lines and page on with next_offset", MaxOutputLines),
			"limit %d is above the limit of %d lines per page", a.Limit, MaxOutputLines)
	case a.Limit == 0 && a.Filter == "" && lines:
		page.Limit = DefaultOutputLines
	case a.Limit == 0 && !lines:
		page.Limit = DefaultOutputBytes
	}
	rec, err := t.own(ctx, a.TaskID)
	if err != nil {
		return nil, err
	}
	stream := bgcmd.Stream(a.Stream)
	res, err := t.r.ReadOutput(ctx, a.TaskID, stream, page)
	if err != nil {
		if rec.State != bgcmd.StateStartFailed {
			return nil, notFoundAs(err, a.TaskID)
		}
		// It never ran, so it printed nothing.
		res = &artifacts.Result{Unit: page.Unit, Offset: a.Offset, NextOffset: a.Offset}
		if res.Unit == "" {
			res.Unit = artifacts.UnitBytes
		}
	}
	if rec.State.Settled() {
		if _, err := t.r.MarkRead(ctx, a.TaskID); err != nil {
			return nil, err
		}
	}
	return newPage(rec.ID, stream, rec.State, rec.Error, res, a), nil
}

// newPage converts a reader page.
func newPage(id string, stream bgcmd.Stream, state bgcmd.State, jobErr string, res *artifacts.Result, a outputArgs) *OutputPage {
	p := &OutputPage{TaskID: id, State: state,
		OutputPage: artifacts.NewOutputPage(stream, res, a.Raw, a.Filter != "")}
	switch {
	case state == bgcmd.StateStartFailed:
		p.Next = "the command never started, so it has no output: " + jobErr
	case !state.Settled() && a.Tail == 0:
		p.Next = fmt.Sprintf("still running: more output may come; continue from offset %d", p.NextOffset)
	case p.ScanCapped:
		p.Next = fmt.Sprintf("the filter scanned for its %s budget and stopped before line %d: call again with offset %d to go on",
			artifacts.GrepBudget, p.NextOffset+1, p.NextOffset)
	case p.HasMore && a.Tail == 0:
		p.Next = fmt.Sprintf("more: call again with offset %d", p.NextOffset)
	}
	return p
}
