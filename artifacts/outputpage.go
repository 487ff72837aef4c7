package artifacts

import (
	"encoding/base64"

	"github.com/bgcmd/bgcmd"
)

// OutputPage is one page of a job's stream as bgcmd shows it in JSON. The
// CLI's `output --json` is exactly this object; the agent tool
// command_output embeds it and adds the task, its state and a hint. Field
// names are a stable contract for scripts and models.
type OutputPage struct {
	Stream bgcmd.Stream `json:"stream"`
	Unit   Unit         `json:"unit"`
	// Offset and NextOffset are in Unit; the following page starts at
	// NextOffset.
	Offset     int64 `json:"offset"`
	NextOffset int64 `json:"next_offset"`
	// TotalSize is the stream's size in Unit as far as it is known.
	TotalSize int64 `json:"total_size"`
	// HasMore says a following page can hold more (always while the job
	// runs).
	HasMore bool `json:"has_more"`
	// Text is the page as text; absent for raw and filter pages.
	Text *string `json:"text,omitempty"`
	// DataBase64 is the page's exact bytes, base64; raw pages only.
	DataBase64 *string `json:"data_base64,omitempty"`
	// Matches are a filter page's matching lines (line numbers from 1); a
	// filter page without a match has an empty list, other pages none.
	Matches []Match `json:"matches,omitzero"`
	// Truncated is true when the page size ceiling (MaxPageBytes), not the
	// limit asked for or the end of the stream, ended the page.
	Truncated bool `json:"truncated,omitempty"`
	// ScanCapped is true when a filter page ended on its scan budget
	// (GrepBudget) before the end of the stream: the lines from NextOffset
	// on are not scanned yet.
	ScanCapped bool `json:"scan_capped,omitempty"`
}

// NewOutputPage converts a reader Result of stream: raw pages carry the
// bytes in DataBase64, filter pages (filter true) their Matches, other
// pages their Text.
func NewOutputPage(stream bgcmd.Stream, res *Result, raw, filter bool) OutputPage {
	p := OutputPage{Stream: stream, Unit: res.Unit, Offset: res.Offset, NextOffset: res.NextOffset,
		TotalSize: res.TotalSize, HasMore: res.HasMore, Truncated: res.LimitCapped, ScanCapped: res.ScanCapped}
	switch {
	case raw:
		data := base64.StdEncoding.EncodeToString(res.Data)
		p.DataBase64 = &data
	case filter:
		p.Matches = res.Matches
		if p.Matches == nil {
			p.Matches = []Match{}
		}
	default:
		text := res.Text
		p.Text = &text
	}
	return p
}
