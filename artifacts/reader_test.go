package artifacts

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestReadPagesMultiByteTextAtEveryAwkwardBoundary(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	content := trickyText(300)
	chars := refChars(content)
	lines := refLines(content)
	want := refText(content)
	limits := map[Unit][]int64{UnitBytes: {1, 2, 3, 5}, UnitChars: {1, 2, 64}, UnitLines: {1, 3}}
	for _, chunk := range []int{1, 2, 3, 7, 4096} {
		// A 16-byte stride puts checkpoints everywhere, many of them where
		// a write split a sequence.
		c, path := capture(t, dir, fmt.Sprintf("chunk%d.log", chunk), content, chunk, 16)
		for _, final := range []bool{false, true} {
			if final {
				require.NoError(t, c.Close())
			}
			src := Source{Path: path, Final: final}
			for _, unit := range []Unit{UnitBytes, UnitChars, UnitLines} {
				for _, limit := range limits[unit] {
					text, _ := pageAll(t, src, Page{Unit: unit}, func() int64 { return limit })
					require.Equal(t, want, text, "chunk %d final %v unit %s limit %d", chunk, final, unit, limit)
					_, data := pageAll(t, src, Page{Unit: unit, Raw: true}, func() int64 { return limit })
					require.Equal(t, content, data, "raw: chunk %d final %v unit %s limit %d", chunk, final, unit, limit)
				}
			}
			if chunk != 3 && chunk != 4096 {
				continue
			}
			for o := 0; o <= len(chars); o++ {
				res, err := Read(src, Page{Unit: UnitChars, Offset: int64(o), Limit: 3})
				require.NoError(t, err)
				end := min(len(chars), o+3)
				require.Equal(t, refText(bytes.Join(chars[o:end], nil)), res.Text, "chars offset %d", o)
				require.EqualValues(t, end, res.NextOffset)
				require.EqualValues(t, len(chars), res.TotalSize)
			}
			for o := 0; o <= len(lines); o++ {
				res, err := Read(src, Page{Unit: UnitLines, Offset: int64(o), Limit: 2})
				require.NoError(t, err)
				end := min(len(lines), o+2)
				require.Equal(t, string(bytes.Join(lines[o:end], nil)), res.Text, "lines offset %d", o)
				require.EqualValues(t, end, res.NextOffset)
				require.EqualValues(t, len(lines), res.TotalSize)
				require.Equal(t, !final || end < len(lines), res.HasMore)
			}
		}
	}
}

func TestReadInvalidUTF8ShowsReplacementPerByte(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	r := rand.New(rand.NewPCG(13, 14))
	content := invalidText(r, 1500)
	content = append(content, 0xf0, 0x9f, 0x98) // a final, unfinished emoji
	c, path := capture(t, dir, "bad.log", content, 61, 16)
	require.NoError(t, c.Close())
	src := Source{Path: path, Final: true}
	want := refText(content)
	for _, unit := range []Unit{UnitBytes, UnitChars, UnitLines} {
		for _, limit := range []int64{1, 3, 100} {
			text, data := pageAll(t, src, Page{Unit: unit}, func() int64 { return limit })
			require.Equal(t, want, text, "unit %s limit %d", unit, limit)
			require.Empty(t, data)
			_, data = pageAll(t, src, Page{Unit: unit, Raw: true}, func() int64 { return limit })
			require.Equal(t, content, data, "raw unit %s limit %d", unit, limit)
		}
	}
	res, err := Read(src, Page{Unit: UnitChars, Offset: 0, Limit: 4})
	require.NoError(t, err)
	require.EqualValues(t, len(refChars(content)), res.TotalSize)
	require.Equal(t, c.Summary().Chars, res.TotalSize)

	small := filepath.Join(dir, "small.log")
	require.NoError(t, os.WriteFile(small, []byte("a\xffb\xe4\xb8\n"), 0o600))
	res, err = Read(Source{Path: small, Final: true}, Page{Unit: UnitChars})
	require.NoError(t, err)
	require.Equal(t, "a\uFFFDb\uFFFD\uFFFD\n", res.Text)
	require.EqualValues(t, 6, res.TotalSize)
}

func TestReadBytesTextNeverSplitsASequence(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "emoji.log")
	require.NoError(t, os.WriteFile(path, []byte("a😀b"), 0o600))
	src := Source{Path: path, Final: true}

	res, err := Read(src, Page{Offset: 0, Limit: 2})
	require.NoError(t, err)
	require.Equal(t, "a", res.Text, "the page ends before the emoji it would split")
	require.EqualValues(t, 1, res.NextOffset)

	res, err = Read(src, Page{Offset: 1, Limit: 1})
	require.NoError(t, err)
	require.Equal(t, "😀", res.Text, "a page that would be empty holds the whole sequence")
	require.EqualValues(t, 5, res.NextOffset)

	res, err = Read(src, Page{Offset: 2, Limit: 3})
	require.NoError(t, err)
	require.Equal(t, "b", res.Text, "a page asked to start inside the emoji starts after it")
	require.EqualValues(t, 5, res.Offset, "and says where it started")
	require.EqualValues(t, 6, res.NextOffset)

	res, err = Read(src, Page{Offset: 0, Limit: 2, Raw: true})
	require.NoError(t, err)
	require.Equal(t, []byte("a\xf0"), res.Data, "raw pages are exact")
	require.EqualValues(t, 2, res.NextOffset)
	require.True(t, res.HasMore)
	require.EqualValues(t, 6, res.TotalSize)
}

func TestReadLiveLogHoldsBackWhatMayStillChange(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	path := filepath.Join(dir, "live.log")
	c, err := NewCapture(CaptureOptions{Path: path})
	require.NoError(t, err)
	_, err = c.Write([]byte("abc\n日\xe6\x9c"))
	require.NoError(t, err)
	src := Source{Path: path}

	res, err := Read(src, Page{Unit: UnitChars})
	require.NoError(t, err)
	require.Equal(t, "abc\n日", res.Text, "the unfinished 本 is not shown")
	require.EqualValues(t, 5, res.NextOffset)
	require.EqualValues(t, 5, res.TotalSize)
	require.True(t, res.HasMore)

	res, err = Read(src, Page{})
	require.NoError(t, err)
	require.Equal(t, "abc\n日", res.Text)
	require.EqualValues(t, 7, res.NextOffset)
	require.EqualValues(t, 9, res.TotalSize)

	res, err = Read(src, Page{Raw: true})
	require.NoError(t, err)
	require.Equal(t, []byte("abc\n日\xe6\x9c"), res.Data, "raw bytes are all there")

	res, err = Read(src, Page{Unit: UnitLines})
	require.NoError(t, err)
	require.Equal(t, "abc\n", res.Text, "the unfinished line waits")
	require.EqualValues(t, 1, res.NextOffset)
	require.EqualValues(t, 2, res.TotalSize)
	require.True(t, res.HasMore)

	res, err = Read(src, Page{Unit: UnitLines, Offset: 1})
	require.NoError(t, err)
	require.Empty(t, res.Text)
	require.EqualValues(t, 1, res.NextOffset)
	require.True(t, res.HasMore)

	res, err = Read(src, Page{Tail: 1})
	require.NoError(t, err)
	require.Equal(t, "日", res.Text, "tail shows the unfinished line")
	require.EqualValues(t, 1, res.Offset)
	require.EqualValues(t, 1, res.NextOffset, "but does not pass it")

	_, err = c.Write([]byte("\xac!\n"))
	require.NoError(t, err)
	res, err = Read(src, Page{Unit: UnitLines, Offset: 1})
	require.NoError(t, err)
	require.Equal(t, "日本!\n", res.Text)
	require.EqualValues(t, 2, res.NextOffset)
	res, err = Read(src, Page{Unit: UnitChars, Offset: 5})
	require.NoError(t, err)
	require.Equal(t, "本!\n", res.Text)

	require.NoError(t, c.Close())
	res, err = Read(Source{Path: path, Final: true}, Page{Unit: UnitLines, Offset: 1})
	require.NoError(t, err)
	require.False(t, res.HasMore)
}

func TestReadPastTheEndIsAnEmptyFinalPage(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "out.log")
	require.NoError(t, os.WriteFile(path, []byte("one\ntwo\n"), 0o600))
	src := Source{Path: path, Final: true}
	for _, unit := range []Unit{UnitBytes, UnitChars, UnitLines} {
		for _, offset := range []int64{8, 2, 100} {
			if unit == UnitLines && offset == 8 {
				continue
			}
			if unit != UnitLines && offset == 2 {
				continue
			}
			res, err := Read(src, Page{Unit: unit, Offset: offset})
			require.NoError(t, err)
			require.Empty(t, res.Text)
			require.Equal(t, offset, res.NextOffset)
			require.False(t, res.HasMore, "unit %s offset %d", unit, offset)
		}
	}
	empty := filepath.Join(t.TempDir(), "empty.log")
	require.NoError(t, os.WriteFile(empty, nil, 0o600))
	for _, p := range []Page{{}, {Unit: UnitChars}, {Unit: UnitLines}, {Tail: 5}, {Grep: "x"}} {
		res, err := Read(Source{Path: empty, Final: true}, p)
		require.NoError(t, err)
		require.Zero(t, res.TotalSize)
		require.Zero(t, res.NextOffset)
		require.False(t, res.HasMore)
		require.Empty(t, res.Text)
	}
}

func TestReadRejectsBadRequestsNamingTheValue(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "out.log")
	require.NoError(t, os.WriteFile(path, []byte("x\n"), 0o600))
	src := Source{Path: path, Final: true}
	for _, tc := range []struct {
		page Page
		want string
	}{
		{Page{Offset: -1}, "negative offset -1"},
		{Page{Limit: -2}, "negative limit -2"},
		{Page{Tail: -3}, "negative tail -3"},
		{Page{Grep: "x", MaxMatches: -4}, "negative max matches -4"},
		{Page{Unit: "words"}, `unknown unit "words"`},
		{Page{Grep: "a(b"}, `invalid grep pattern "a(b"`},
		{Page{Unit: UnitChars, Tail: 2}, "not chars"},
		{Page{Unit: UnitBytes, Grep: "x"}, "not bytes"},
		{Page{Grep: "x", Raw: true}, "raw does not apply"},
	} {
		_, err := Read(src, tc.page)
		require.ErrorIs(t, err, ErrInvalidPage, "%+v", tc.page)
		require.ErrorContains(t, err, tc.want)
	}
	_, err := Read(Source{}, Page{})
	require.ErrorIs(t, err, ErrInvalidPage)
	_, err = Read(Source{Path: filepath.Join(t.TempDir(), "nope.log"), Final: true}, Page{})
	require.ErrorIs(t, err, os.ErrNotExist, "a settled log that is missing is an error")
	res, err := Read(Source{Path: filepath.Join(t.TempDir(), "nope.log")}, Page{})
	require.NoError(t, err, "a live log not created yet is an empty stream")
	require.Equal(t, int64(0), res.TotalSize)
	require.True(t, res.HasMore)
	_, err = Preview(src, -1)
	require.ErrorIs(t, err, ErrInvalidPage)
	require.ErrorContains(t, err, "-1")
}

func TestReadCapsPagesAtMaxPageBytes(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	line := strings.Repeat("x", 99) + "\n"
	var b bytes.Buffer
	for b.Len() < 2*MaxPageBytes {
		b.WriteString(line)
	}
	giantLine := int64(b.Len() / len(line))
	giant := strings.Repeat("é", MaxPageBytes) // 2 MiB, one line
	b.WriteString(giant + "\nafter\n")
	content := b.Bytes()
	path := filepath.Join(dir, "big.log")
	require.NoError(t, os.WriteFile(path, content, 0o600))
	src := Source{Path: path, Final: true}

	res, err := Read(src, Page{Limit: 2 * MaxPageBytes})
	require.NoError(t, err)
	require.True(t, res.LimitCapped)
	require.EqualValues(t, MaxPageBytes, res.NextOffset)

	res, err = Read(src, Page{Unit: UnitChars, Limit: 3 * MaxPageBytes})
	require.NoError(t, err)
	require.True(t, res.LimitCapped)
	require.EqualValues(t, MaxPageBytes, res.NextOffset)

	res, err = Read(src, Page{Unit: UnitLines, Limit: 1 << 40})
	require.NoError(t, err)
	require.True(t, res.LimitCapped)
	require.EqualValues(t, MaxPageBytes/len(line), res.NextOffset, "whole lines only")
	require.Equal(t, strings.Repeat(line, MaxPageBytes/len(line)), res.Text)

	res, err = Read(src, Page{Unit: UnitLines, Limit: 10})
	require.NoError(t, err)
	require.False(t, res.LimitCapped, "a limit that fits is not capped")

	res, err = Read(src, Page{Unit: UnitLines, Offset: giantLine, Limit: 5})
	require.NoError(t, err)
	require.True(t, res.LimitCapped)
	require.True(t, giant[:MaxPageBytes] == res.Text, "the giant line's first MiB")
	require.Equal(t, giantLine+1, res.NextOffset, "and the page moves past it")
	res, err = Read(src, Page{Unit: UnitLines, Offset: res.NextOffset})
	require.NoError(t, err)
	require.Equal(t, "after\n", res.Text)
	require.False(t, res.HasMore)

	res, err = Read(src, Page{Tail: 3})
	require.NoError(t, err)
	require.True(t, res.LimitCapped)
	require.Equal(t, "after\n", res.Text, "only the lines that fit")
	require.Equal(t, giantLine+1, res.Offset)

	odd := filepath.Join(dir, "odd.log")
	require.NoError(t, os.WriteFile(odd, []byte("ab"+giant+"c"), 0o600))
	res, err = Read(Source{Path: odd, Final: true}, Page{Tail: 1})
	require.NoError(t, err)
	require.True(t, res.LimitCapped)
	require.True(t, strings.Repeat("é", MaxPageBytes/2-1)+"c" == res.Text, "the end of a giant last line, cut between characters")
}

func TestReadAPageDeepInALargeLogUsesTheIndex(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	content := trickyText(4 << 20)
	c, path := capture(t, dir, "huge.log", content, 64<<10, defaultStride)
	require.NoError(t, c.Close())
	src := Source{Path: path, Final: true}
	chars := c.Summary().Chars
	lines := c.Summary().Lines
	// The cost is measured by the benchmarks; here the answers deep in the
	// log are checked against the reference model.
	off := chars - chars/1000
	res, err := Read(src, Page{Unit: UnitChars, Offset: off, Limit: 50})
	require.NoError(t, err)
	all := []rune(string(content))
	require.Equal(t, string(all[off:off+50]), res.Text)
	lo := lines - lines/1000
	res, err = Read(src, Page{Unit: UnitLines, Offset: lo, Limit: 3})
	require.NoError(t, err)
	ref := refLines(content)
	require.Equal(t, string(bytes.Join(ref[lo:lo+3], nil)), res.Text)
}
