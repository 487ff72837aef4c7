package artifacts

import (
	"bytes"
	"math/rand/v2"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// The reference model: characters and lines computed the slow, obvious way
// from the whole content, to check the streaming and indexed code against.

// refChars splits b into its characters as utf8.DecodeRune walks it.
func refChars(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		_, size := utf8.DecodeRune(b)
		out = append(out, b[:size])
		b = b[size:]
	}
	return out
}

// refText is b as text, one U+FFFD per invalid byte.
func refText(b []byte) string {
	var sb strings.Builder
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		if r == utf8.RuneError && size == 1 {
			sb.WriteString("\uFFFD")
		} else {
			sb.Write(b[:size])
		}
		b = b[size:]
	}
	return sb.String()
}

// refLines splits b into lines, each with its '\n'; a last line without
// '\n' counts.
func refLines(b []byte) [][]byte {
	var out [][]byte
	for len(b) > 0 {
		i := bytes.IndexByte(b, '\n')
		if i < 0 {
			return append(out, b)
		}
		out = append(out, b[:i+1])
		b = b[i+1:]
	}
	return out
}

// tricky is text that exercises every kind of character: ASCII, two-,
// three- and four-byte sequences, combining marks, and newlines.
const tricky = "héllo wörld\n日本語のテキスト\n😀🎉👍🏽 e\u0301 a\u0308\u0323\n\n" +
	"mixed: aé日😀\tZ\r\nend without newline? no\n"

// trickyText returns about n bytes of tricky text.
func trickyText(n int) []byte {
	var b bytes.Buffer
	for b.Len() < n {
		b.WriteString(tricky)
	}
	return b.Bytes()
}

// invalidText mixes valid text with invalid and truncated sequences.
func invalidText(r *rand.Rand, n int) []byte {
	pieces := [][]byte{
		[]byte("ok "), []byte("日"), []byte("😀"), []byte("\n"), {0xff}, {0xc0, 0x80},
		{0xe4, 0xb8}, {0xf0, 0x9f, 0x98}, {0x80}, {0xbf, 0xbf}, {0xed, 0xa0, 0x80}, []byte("é"),
	}
	var b []byte
	for len(b) < n {
		b = append(b, pieces[r.IntN(len(pieces))]...)
	}
	return b
}

// capture writes content to a new capture at dir/name in chunks of chunk
// bytes (random sizes up to chunk when random is set) with the given index
// stride, and returns it still open.
func capture(t testing.TB, dir, name string, content []byte, chunk int, stride int64) (*Capture, string) {
	t.Helper()
	path := filepath.Join(dir, name)
	c, err := newCapture(CaptureOptions{Path: path}, stride)
	require.NoError(t, err)
	writeChunks(t, c, content, chunk)
	return c, path
}

func writeChunks(t testing.TB, c *Capture, content []byte, chunk int) {
	t.Helper()
	for len(content) > 0 {
		k := min(chunk, len(content))
		n, err := c.Write(content[:k])
		require.NoError(t, err)
		require.Equal(t, k, n)
		content = content[k:]
	}
}

// pageAll reads src page by page from offset 0, following NextOffset with
// p's unit and raw setting and a limit from limit (nil: p.Limit), and
// returns the pages' text and data joined. It stops at the end of a final
// source, or when a page makes no progress.
func pageAll(t testing.TB, src Source, p Page, limit func() int64) (string, []byte) {
	t.Helper()
	unit := p.Unit
	if unit == "" {
		unit = UnitBytes
	}
	var text strings.Builder
	data := []byte{}
	p.Offset = 0
	for i := 0; ; i++ {
		require.Less(t, i, 10_000_000, "paging does not end")
		if limit != nil {
			p.Limit = limit()
		}
		res, err := Read(src, p)
		require.NoError(t, err)
		require.Equal(t, p.Offset, res.Offset)
		checkPageShape(t, unit, res)
		if p.Raw {
			require.NotNil(t, res.Data)
			require.Empty(t, res.Text)
		}
		text.WriteString(res.Text)
		data = append(data, res.Data...)
		if res.NextOffset == p.Offset {
			require.Empty(t, res.Text)
			require.Empty(t, res.Data)
			break
		}
		p.Offset = res.NextOffset
		if src.Final && !res.HasMore {
			break
		}
	}
	return text.String(), data
}

// checkPageShape checks what a page says about itself.
func checkPageShape(t testing.TB, unit Unit, r *Result) {
	t.Helper()
	require.Equal(t, unit, r.Unit)
	require.GreaterOrEqual(t, r.NextOffset, r.Offset)
	require.True(t, utf8.ValidString(r.Text))
	if r.Data != nil {
		return // raw pages are checked by their joined bytes
	}
	switch unit {
	case UnitChars:
		require.EqualValues(t, r.NextOffset-r.Offset, utf8.RuneCountInString(r.Text))
	case UnitLines:
		if r.NextOffset > r.Offset && !r.LimitCapped {
			n := int64(strings.Count(r.Text, "\n"))
			if !strings.HasSuffix(r.Text, "\n") {
				n++
			}
			require.Equal(t, r.NextOffset-r.Offset, n)
		}
	}
}

func bytesReader(b []byte) *bytes.Reader { return bytes.NewReader(b) }
