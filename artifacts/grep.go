package artifacts

import (
	"bufio"
	"errors"
	"io"
	"regexp"
	"time"
)

// GrepBudget bounds the time one grep page scans: a pattern can cost far
// more per line than reading it (RE2 is linear, but in the pattern's size
// as well as the line's), and the caller of a read (an agent's filter over
// a log of millions of lines) would otherwise hold a CPU until the whole
// log is scanned, after it stopped waiting too. A page that reaches it
// ends early with ScanCapped; the next page goes on from NextOffset.
const GrepBudget = time.Second

// grepBudget is GrepBudget; tests shrink it.
var grepBudget = GrepBudget

// grepCheckLines and grepCheckBytes are how much a grep scans between two
// looks at the clock (whichever comes first), and at least before its
// first: each page makes progress. A single line is never cut short: it
// costs at most MaxPageBytes of matching.
const (
	grepCheckLines = 64
	grepCheckBytes = 64 << 10
)

// grepPage scans lines from p.Offset (or from the start of the last p.Tail
// lines) and returns those re matches. It stops after p.Limit lines (0: at
// the end), after p.MaxMatches matches, before a match that would take
// the matches' text past MaxPageBytes (LimitCapped), or once it has
// scanned for grepBudget (ScanCapped); NextOffset is the first line not
// scanned, so a following grep page goes on from there. A line longer
// than MaxPageBytes is matched and shown by its first MaxPageBytes bytes.
// A live log's unfinished last line is not scanned.
func (v *view) grepPage(re *regexp.Regexp, p Page) (*Result, error) {
	t, err := v.totals()
	if err != nil {
		return nil, err
	}
	from := p.Offset
	if p.Tail > 0 {
		from = max(0, t.lines-p.Tail)
	}
	avail := t.lines
	if !v.final {
		avail = t.newlines
	}
	maxMatches := p.MaxMatches
	if maxMatches == 0 {
		maxMatches = DefaultMaxMatches
	}
	res := &Result{Unit: UnitLines, Offset: from, NextOffset: from, TotalSize: t.lines, Matches: []Match{}}
	if from < avail {
		var deadline time.Time // none
		if !p.Unbudgeted {
			deadline = time.Now().Add(grepBudget)
		}
		if err := v.grep(re, res, avail, p.Limit, maxMatches, deadline); err != nil {
			return nil, err
		}
	}
	res.HasMore = !v.final || res.NextOffset < res.TotalSize
	return res, nil
}

// grep scans for grepPage, until deadline unless it is zero.
func (v *view) grep(re *regexp.Regexp, res *Result, avail, limit int64, maxMatches int, deadline time.Time) error {
	start, err := v.lineStart(res.Offset)
	if err != nil {
		return err
	}
	r := bufio.NewReaderSize(io.NewSectionReader(v.f, start, v.size-start), scanChunk)
	var acc []byte
	textBytes := 0
	line := res.Offset
	var sinceLines, sinceBytes int
	for line < avail && (limit == 0 || line-res.Offset < limit) && len(res.Matches) < maxMatches {
		if sinceLines >= grepCheckLines || sinceBytes >= grepCheckBytes {
			if !deadline.IsZero() && time.Now().After(deadline) {
				res.ScanCapped = true
				break
			}
			sinceLines, sinceBytes = 0, 0
		}
		if acc, err = readLine(r, acc); err != nil {
			return err
		}
		sinceLines, sinceBytes = sinceLines+1, sinceBytes+len(acc)+1
		// Matching the bytes is matching the text decodeText makes of them
		// (regexp reads an invalid byte as U+FFFD, as decodeText shows
		// it), without a string per line scanned: only a match is decoded.
		if re.Match(acc) {
			text := decodeText(acc)
			if textBytes+len(text) > MaxPageBytes && len(res.Matches) > 0 {
				res.LimitCapped = true
				break
			}
			textBytes += len(text)
			res.Matches = append(res.Matches, Match{Line: line + 1, Text: text})
		}
		line++
	}
	res.NextOffset = line
	return nil
}

// readLine reads the next line into acc[:0] without its '\n', keeping at
// most its first MaxPageBytes bytes (cut at a character boundary). A last
// line without '\n' is returned with a nil error.
func readLine(r *bufio.Reader, acc []byte) ([]byte, error) {
	acc = acc[:0]
	cut := false
	for {
		frag, err := r.ReadSlice('\n')
		if err == nil {
			frag = frag[:len(frag)-1]
		}
		if room := MaxPageBytes - len(acc); len(frag) > room {
			frag, cut = frag[:room], true
		}
		acc = append(acc, frag...)
		switch {
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case err == nil, errors.Is(err, io.EOF) && len(acc) > 0:
			if cut {
				acc = acc[:incompleteSuffix(acc)]
			}
			return acc, nil
		default:
			return acc, err
		}
	}
}
