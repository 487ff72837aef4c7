package webui

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/bgcmd/bgcmd"
	"github.com/bgcmd/bgcmd/artifacts"
)

// Output page sizes, in lines.
const (
	defaultOutputLines = 200
	maxOutputLines     = artifacts.DefaultPageLines
	// grepScanLines bounds the lines one grep page scans, so a page over a
	// huge log stays quick; the page links to where the scan stopped.
	grepScanLines  = 200_000
	maxGrepMatches = 500
)

// line is one numbered line of output (numbers from 1, as grep -n).
type line struct {
	N    int64
	Text string
}

type outputBody struct {
	ID      string
	Stream  bgcmd.Stream
	Running bool
	Banked  bool
	Grep    string
	Limit   int64
	Tail    bool
	Lines   []line
	Matches []artifacts.Match
	// Offset, NextOffset and TotalLines are in lines, from 0.
	Offset, NextOffset, TotalLines int64
	LimitCapped                    bool
	// Links, "" when they would lead nowhere.
	Prev, Next, First, TailLink, GrepMore, Other string
	// Follow is the event stream a running job's page follows.
	Follow string
}

func (s *Server) handleOutput(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	rec, st, err := s.jobStream(ctx, r)
	if err != nil {
		s.fail(w, err)
		return
	}
	q := r.URL.Query()
	offset, err := intParam(q, "offset", 0, 0, 1<<62)
	if err != nil {
		s.fail(w, err)
		return
	}
	limit, err := intParam(q, "limit", defaultOutputLines, 1, maxOutputLines)
	if err != nil {
		s.fail(w, err)
		return
	}
	tail, err := intParam(q, "tail", 0, 0, maxOutputLines)
	if err != nil {
		s.fail(w, err)
		return
	}
	grep := q.Get("grep")
	src, art, err := s.source(ctx, rec, st)
	if err != nil {
		s.fail(w, err)
		return
	}
	page := artifacts.Page{Unit: artifacts.UnitLines, Offset: offset, Limit: limit}
	switch {
	case grep != "":
		page = artifacts.Page{Unit: artifacts.UnitLines, Offset: offset, Limit: grepScanLines, Grep: grep, MaxMatches: maxGrepMatches}
	case tail > 0:
		page = artifacts.Page{Tail: tail}
	}
	res, err := artifacts.Read(src, page)
	if err != nil {
		s.fail(w, readError(rec.ID, st, art != nil, err))
		return
	}
	base := s.prefix + "/jobs/" + url.PathEscape(rec.ID) + "/output"
	link := func(v url.Values) string { return base + "?" + v.Encode() }
	body := outputBody{ID: rec.ID, Stream: st, Running: !rec.State.Settled(), Banked: art != nil,
		Grep: grep, Limit: limit, Tail: tail > 0, Offset: res.Offset, NextOffset: res.NextOffset,
		TotalLines: res.TotalSize, LimitCapped: res.LimitCapped}
	other := bgcmd.Stderr
	if st == bgcmd.Stderr {
		other = bgcmd.Stdout
	}
	body.Other = link(url.Values{"stream": {string(other)}})
	body.TailLink = link(url.Values{"stream": {string(st)}, "tail": {strconv.FormatInt(limit, 10)}})
	if grep != "" {
		body.Matches = res.Matches
		if res.NextOffset < res.TotalSize {
			body.GrepMore = link(url.Values{"stream": {string(st)}, "grep": {grep}, "offset": {strconv.FormatInt(res.NextOffset, 10)}})
		}
	} else {
		body.Lines = splitLines(res.Text, res.Offset)
		if body.Running && int64(len(body.Lines)) > res.NextOffset-res.Offset {
			// A live tail shows the unfinished last line; the follow sends
			// it once it ends, so it is not shown twice.
			body.Lines = body.Lines[:max(0, res.NextOffset-res.Offset)]
		}
		pageQ := func(off int64) string {
			return link(url.Values{"stream": {string(st)}, "offset": {strconv.FormatInt(off, 10)}, "limit": {strconv.FormatInt(limit, 10)}})
		}
		if res.Offset > 0 {
			body.First = pageQ(0)
			body.Prev = pageQ(max(0, res.Offset-limit))
		}
		if res.NextOffset < res.TotalSize {
			body.Next = pageQ(res.NextOffset)
		}
		if body.Running {
			body.Follow = s.prefix + "/jobs/" + url.PathEscape(rec.ID) + "/follow?" +
				url.Values{"stream": {string(st)}, "offset": {strconv.FormatInt(res.NextOffset, 10)}}.Encode()
		}
	}
	script := ""
	if body.Follow != "" {
		script = "follow.js"
	}
	s.render(w, http.StatusOK, "output", view{Title: fmt.Sprintf("%s of %s", st, shortID(rec.ID)), Script: script, Body: body})
}

// splitLines numbers the lines of a lines page that starts at line offset
// (from 0).
func splitLines(text string, offset int64) []line {
	if text == "" {
		return nil
	}
	parts := strings.SplitAfter(text, "\n")
	if parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	out := make([]line, len(parts))
	for i, p := range parts {
		out[i] = line{N: offset + int64(i) + 1, Text: strings.TrimSuffix(p, "\n")}
	}
	return out
}

// intParam reads an integer query parameter within [lo, hi], def when
// absent.
func intParam(q url.Values, name string, def, lo, hi int64) (int64, error) {
	v := q.Get(name)
	if v == "" {
		return def, nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil || n < lo || n > hi {
		return 0, badRequest("%s %q: want a whole number from %d to %d", name, v, lo, hi)
	}
	return n, nil
}

// readError explains a failed read: a bad page (400), a banked file that
// is gone, or anything else.
func readError(id string, st bgcmd.Stream, banked bool, err error) error {
	switch {
	case errors.Is(err, artifacts.ErrInvalidPage):
		return &httpError{code: http.StatusBadRequest, msg: err.Error()}
	case banked && errors.Is(err, errNotExist):
		return &httpError{code: http.StatusGone, msg: fmt.Sprintf(
			"the %s of job %s was banked, but its file is missing (removed by hand?); the output is lost", st, id)}
	}
	return fmt.Errorf("read the %s of job %s: %w", st, id, err)
}
