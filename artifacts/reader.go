package artifacts

import (
	"errors"
	"fmt"
	"io"
	"os"
	"regexp"
)

// Unit is what page offsets and limits count.
type Unit string

// The units of a Page.
const (
	// UnitBytes counts bytes. It is the default (the empty Unit).
	UnitBytes Unit = "bytes"
	// UnitChars counts characters: Unicode code points, an invalid byte
	// counting as one (see the package doc).
	UnitChars Unit = "chars"
	// UnitLines counts lines, each ending at '\n' (or at the end of a final
	// log).
	UnitLines Unit = "lines"
)

// Page sizes.
const (
	// MaxPageBytes bounds the bytes one page covers, whatever its unit and
	// limit; Result.LimitCapped says when it cut a page short.
	MaxPageBytes = 1 << 20
	// DefaultPageBytes is the limit of a bytes page when Page.Limit is 0.
	DefaultPageBytes = 64 << 10
	// DefaultPageChars is the limit of a chars page when Page.Limit is 0.
	DefaultPageChars = 64 << 10
	// DefaultPageLines is the limit of a lines page when Page.Limit is 0.
	DefaultPageLines = 1000
	// DefaultMaxMatches is how many grep matches a page holds when
	// Page.MaxMatches is 0.
	DefaultMaxMatches = 100
)

// Page says which piece of a log to Read. Exactly one of three kinds:
//
//   - a plain page: Limit units from Offset;
//   - Tail > 0: the last Tail lines (Offset is ignored);
//   - Grep set: the lines matching a regular expression, scanning from line
//     Offset (or from the start of the last Tail lines).
type Page struct {
	// Unit is what Offset and Limit count; "" means bytes. Tail and Grep
	// count lines and accept only "" or UnitLines.
	Unit Unit
	// Offset is where the page starts, in Unit, from 0.
	Offset int64
	// Limit is how many units the page holds at most; 0 means
	// DefaultPageBytes, DefaultPageChars or DefaultPageLines. A page never
	// covers more than MaxPageBytes bytes. With Grep it bounds the lines
	// scanned, and 0 means to the end. A tail page ignores it.
	Limit int64
	// Tail, when positive, asks for the last Tail lines.
	Tail int64
	// Grep is a Go (RE2) regular expression matched against each line, as
	// text, without its '\n'. Reading never consumes or changes the log.
	Grep string
	// MaxMatches bounds the matches of a grep page; 0 means
	// DefaultMaxMatches.
	MaxMatches int
	// Unbudgeted lifts a grep page's scan budget (GrepBudget): for a
	// reader that reads for itself (the CLI), not for a server that reads
	// for callers it does not trust with its CPU.
	Unbudgeted bool
	// Raw returns the page's exact bytes in Result.Data instead of text in
	// Result.Text. It works in every unit (a chars or lines page covers
	// whole characters or lines, so its bytes are exact too), but not with
	// Grep.
	Raw bool
}

// Match is one line a grep page matched: its 1-based line number and its
// text without the '\n'.
type Match struct {
	Line int64  `json:"line"`
	Text string `json:"text"`
}

// Result is one page of a log.
//
// Offset and NextOffset are in Unit: a following page starts at NextOffset,
// and pages read that way join up exactly (raw bytes reproduce the log byte
// for byte; text reproduces its decoded text). TotalSize is the log's size
// in Unit as far as it is known (for a live log, see Read). HasMore says a
// later page can hold more: always for a live log, NextOffset < TotalSize
// for a final one.
type Result struct {
	Unit       Unit
	Offset     int64
	NextOffset int64
	TotalSize  int64
	HasMore    bool
	// Text is the page as text: never a split UTF-8 sequence, each invalid
	// byte shown as U+FFFD. Empty for raw and grep pages.
	Text string
	// Data is the page's exact bytes, for raw pages only.
	Data []byte
	// Matches are a grep page's matching lines, in order.
	Matches []Match
	// LimitCapped is true when MaxPageBytes, not the limit or the end of
	// the log, ended the page.
	LimitCapped bool
	// ScanCapped is true when a grep page's scan budget (GrepBudget) ended
	// it: the lines from NextOffset on are not scanned yet, and a page
	// from there goes on.
	ScanCapped bool
}

// Source names a log to read: the live log of a running job or a banked
// artifact.
type Source struct {
	// Path is the log file.
	Path string
	// IndexPath is its index; "" means Path+IndexSuffix.
	IndexPath string
	// Final says the job has settled: the log will not grow.
	Final bool
	// Size, when HasSize is set, is the size a final log was banked with:
	// a file of any other size has been changed since and is reported as
	// ErrCorrupt, never served as the record.
	Size    int64
	HasSize bool
}

// Read returns one page of the log src names. The log is the truth: a
// missing index, or one that does not match the log, is rebuilt by scanning
// the log once (and, for a final source, rewritten atomically) instead of
// being trusted.
//
// A page costs a few small index reads, about three index strides of
// scanning (one to find the offset, the others to check the checkpoints it
// relies on and to count the end of the log), and the page's own bytes;
// bytes pages need no index at all. The last Tail lines are found reading
// backwards from the end. Grep scans the lines it covers.
//
// Units:
//   - bytes: a text page ends before a UTF-8 sequence the page limit would
//     split, so NextOffset may be up to three bytes short of Offset+Limit;
//     when the page would then be empty it holds the whole sequence
//     instead. An Offset inside a valid sequence starts the page at the
//     next character (the Offset the result reports); bytes that are not
//     UTF-8 show as U+FFFD. Raw pages are exact bytes, never adjusted.
//   - chars: a page covers whole characters.
//   - lines: a page covers whole lines. A single line longer than
//     MaxPageBytes is returned cut to its first MaxPageBytes bytes (at a
//     character boundary), with LimitCapped set, and NextOffset moves past
//     it; read it by bytes to see it all.
//
// A live source (Final false) is read as it stands: TotalSize is what is
// known now, HasMore is true, and text never ends in a UTF-8 sequence that
// may still be completed (a raw bytes page returns every byte written). By
// chars, TotalSize excludes such a sequence; by lines it counts the last
// line even without its '\n', but pages and grep stop before that line
// until it ends, so following NextOffset never reads half a line. A tail
// page does show the unfinished last line (a prompt without a newline is
// what one wants to see) while its NextOffset stays at that line's start.
//
// An offset at or past the end gives an empty page with NextOffset equal to
// Offset. Bad requests return an error wrapping ErrInvalidPage; a missing
// final log returns an error wrapping os.ErrNotExist, while a missing live
// log reads as empty (a capture creates its log at the first byte).
func Read(src Source, p Page) (*Result, error) {
	unit, re, err := p.check()
	if err != nil {
		return nil, err
	}
	v, err := openView(src)
	if err != nil {
		return nil, err
	}
	defer v.close()
	v.needChars = unit == UnitChars
	res, err := v.read(unit, re, p)
	if errors.Is(err, errStaleIndex) && !v.rebuilt {
		if _, err = v.rebuild(); err == nil {
			res, err = v.read(unit, re, p)
		}
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", src.Path, err)
	}
	return res, nil
}

// check validates p and returns its effective unit and compiled pattern.
func (p Page) check() (Unit, *regexp.Regexp, error) {
	unit := p.Unit
	switch unit {
	case "":
		unit = UnitBytes
	case UnitBytes, UnitChars, UnitLines:
	default:
		return "", nil, fmt.Errorf("%w: unknown unit %q (want bytes, chars or lines)", ErrInvalidPage, p.Unit)
	}
	switch {
	case p.Offset < 0:
		return "", nil, fmt.Errorf("%w: negative offset %d", ErrInvalidPage, p.Offset)
	case p.Limit < 0:
		return "", nil, fmt.Errorf("%w: negative limit %d", ErrInvalidPage, p.Limit)
	case p.Tail < 0:
		return "", nil, fmt.Errorf("%w: negative tail %d", ErrInvalidPage, p.Tail)
	case p.MaxMatches < 0:
		return "", nil, fmt.Errorf("%w: negative max matches %d", ErrInvalidPage, p.MaxMatches)
	}
	if p.Tail > 0 || p.Grep != "" {
		if p.Unit != "" && p.Unit != UnitLines {
			return "", nil, fmt.Errorf("%w: tail and grep count lines, not %s", ErrInvalidPage, p.Unit)
		}
		unit = UnitLines
	}
	if p.Grep == "" {
		return unit, nil, nil
	}
	if p.Raw {
		return "", nil, fmt.Errorf("%w: raw does not apply to grep matches", ErrInvalidPage)
	}
	re, err := regexp.Compile(p.Grep)
	if err != nil {
		return "", nil, fmt.Errorf("%w: invalid grep pattern %q: %v", ErrInvalidPage, p.Grep, err)
	}
	return unit, re, nil
}

// view is one Read's look at a log: the file, its size when opened (a live
// log is read as of that moment) and, loaded on first need, its index.
type view struct {
	src     Source
	f       *os.File
	size    int64
	final   bool
	ix      *index
	ixf     *os.File
	rebuilt bool
	// needChars makes totals count characters and span check the index's
	// character counts; pages by lines only need lines.
	needChars bool
	buf       []byte   // scratch for scans
	span0     []byte   // the bytes of the last span
	taken     [][]byte // buffers from readBufs, given back at close
}

// scanChunk is how much a scan (tail, grep) reads at a time.
const scanChunk = 32 << 10

func openView(src Source) (*view, error) {
	if src.Path == "" {
		return nil, fmt.Errorf("read: %w: empty source path", ErrInvalidPage)
	}
	f, err := openFile(src.Path)
	if errors.Is(err, os.ErrNotExist) && !src.Final {
		// A capture creates its log at the first byte: until then a live
		// stream is empty, not missing.
		f, err = openFile(os.DevNull)
	}
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	fi, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("read: %w", err)
	}
	if src.Final && src.HasSize && fi.Size() != src.Size {
		_ = f.Close()
		return nil, fmt.Errorf("read: %w: %s is %d bytes but was banked as %d: it changed after it was banked (bgcmd verify checks its hash)",
			ErrCorrupt, src.Path, fi.Size(), src.Size)
	}
	return &view{src: src, f: f, size: fi.Size(), final: src.Final}, nil
}

func (v *view) close() {
	v.giveBack()
	_ = v.f.Close()
	if v.ixf != nil {
		_ = v.ixf.Close()
	}
}

func (v *view) indexPath() string {
	if v.src.IndexPath != "" {
		return v.src.IndexPath
	}
	return v.src.Path + IndexSuffix
}

// index returns the log's index, loading it on first use. An index that is
// missing, unreadable or stale is rebuilt from the log.
func (v *view) index() (*index, error) {
	if v.ix != nil {
		return v.ix, nil
	}
	f, err := openFile(v.indexPath())
	if err == nil {
		var fi os.FileInfo
		if fi, err = f.Stat(); err == nil {
			v.ix, err = loadIndex(f, fi.Size(), v.size, v.final)
		}
		if err == nil {
			v.ixf = f
			return v.ix, nil
		}
		_ = f.Close()
	}
	return v.rebuild()
}

// rebuild scans the log as this view sees it and indexes it in memory. For
// a final log it also replaces the index file atomically; failing that (a
// read-only store, say) is not an error, the page is served all the same.
func (v *view) rebuild() (*index, error) {
	if v.ixf != nil {
		_ = v.ixf.Close()
		v.ixf = nil
	}
	_, recs, err := scanLog(io.NewSectionReader(v.f, 0, v.size), defaultStride, false)
	if err != nil {
		return nil, fmt.Errorf("rebuild index: %w", err)
	}
	if v.final && len(recs) > 0 {
		_ = writeIndexFile(v.indexPath(), defaultStride, recs)
	}
	v.ix = memIndex(defaultStride, recs)
	v.rebuilt = true
	return v.ix, nil
}

// read serves p on this view.
func (v *view) read(unit Unit, re *regexp.Regexp, p Page) (*Result, error) {
	switch {
	case re != nil:
		return v.grepPage(re, p)
	case p.Tail > 0:
		return v.tailPage(p.Tail, p.Raw)
	}
	limit := p.Limit
	switch unit {
	case UnitChars:
		if limit == 0 {
			limit = DefaultPageChars
		}
		return v.charsPage(p.Offset, limit, p.Raw)
	case UnitLines:
		if limit == 0 {
			limit = DefaultPageLines
		}
		return v.linesPage(p.Offset, limit, p.Raw)
	default:
		if limit == 0 {
			limit = DefaultPageBytes
		}
		return v.bytesPage(p.Offset, limit, p.Raw)
	}
}

// readAt reads exactly len(b) bytes at off. The view never asks past the
// size it saw, so a short read means the log shrank under it.
func (v *view) readAt(b []byte, off int64) error {
	n, err := v.f.ReadAt(b, off)
	if n == len(b) {
		return nil
	}
	if err == nil || err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return fmt.Errorf("read log at %d: %w", off, err)
}

// scratch returns the view's scan buffer.
func (v *view) scratch() []byte {
	if v.buf == nil {
		v.buf = v.take(scanChunk)
	}
	return v.buf
}

// finish fills the fields every page shares.
func (v *view) finish(res *Result, page []byte, raw bool) *Result {
	if raw {
		res.Data = append([]byte{}, page...)
	} else {
		res.Text = decodeText(page)
	}
	res.HasMore = !v.final || res.NextOffset < res.TotalSize
	return res
}

// empty returns the page for an offset at or past what can be served.
func (v *view) empty(unit Unit, offset, total int64, raw bool) *Result {
	res := &Result{Unit: unit, Offset: offset, NextOffset: offset, TotalSize: total}
	return v.finish(res, nil, raw)
}
