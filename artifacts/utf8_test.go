package artifacts

import (
	"math/rand/v2"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

func TestRuneCounterAgreesWithDecodeRuneAcrossAnySplit(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(1, 2))
	for round := 0; round < 300; round++ {
		content := invalidText(r, r.IntN(200))
		if round%3 == 0 {
			content = trickyText(r.IntN(300))
		}
		var rc runeCounter
		for rest := content; len(rest) > 0; {
			k := min(len(rest), 1+r.IntN(7))
			rc.write(rest[:k])
			rest = rest[k:]
		}
		require.EqualValues(t, len(refChars(content)), rc.total(), "content %q", content)
		require.Equal(t, utf8.RuneCount(content), countRunes(content))
	}
}

func TestRuneCounterSplitsEverySequenceAtEveryByte(t *testing.T) {
	t.Parallel()
	content := []byte("a日😀é\xff\xe4\xb8b")
	for i := 0; i <= len(content); i++ {
		for j := i; j <= len(content); j++ {
			var rc runeCounter
			rc.write(content[:i])
			rc.write(content[i:j])
			rc.write(content[j:])
			require.EqualValues(t, utf8.RuneCount(content), rc.total(), "splits at %d and %d", i, j)
		}
	}
}

func TestCountRunesOnValidTextCountsLeadingBytes(t *testing.T) {
	t.Parallel()
	for _, s := range []string{"", "a", "abcdefgh", "abcdefghi", "日本語", tricky, string(trickyText(5000))} {
		require.Equal(t, utf8.RuneCountInString(s), countRunes([]byte(s)), "%q", s)
	}
}

func TestFirstBoundaryFindsWhereTheWalkLands(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(3, 4))
	for round := 0; round < 200; round++ {
		content := invalidText(r, 60)
		lands := map[int]bool{}
		pos := 0
		for _, c := range refChars(content) {
			lands[pos] = true
			pos += len(c)
		}
		for x := 0; x < len(content); x++ {
			from := max(0, x-3)
			got := from + firstBoundary(content[from:], x-from)
			want := x
			for !lands[want] && want < len(content) {
				want++
			}
			require.Equal(t, want, got, "x=%d in %q", x, content)
		}
	}
}

func TestTakeRunesStopsAtLimitBudgetAndUnfinishedSequence(t *testing.T) {
	t.Parallel()
	b := []byte("ab日😀")
	k, n, capped := takeRunes(b, 3, len(b), true)
	require.Equal(t, 5, k)
	require.EqualValues(t, 3, n)
	require.False(t, capped)

	k, n, capped = takeRunes(b, 10, 6, true)
	require.Equal(t, 5, k, "the emoji does not fit a 6-byte budget")
	require.EqualValues(t, 3, n)
	require.True(t, capped)

	k, n, capped = takeRunes(b[:7], 10, 100, false)
	require.Equal(t, 5, k, "an unfinished emoji waits for its bytes")
	require.EqualValues(t, 3, n)
	require.False(t, capped)

	k, n, _ = takeRunes(b[:7], 10, 100, true)
	require.Equal(t, 7, k, "at the end for good its bytes are invalid characters")
	require.EqualValues(t, 5, n)
}

func TestDecodeTextShowsEachInvalidByteAsReplacement(t *testing.T) {
	t.Parallel()
	require.Equal(t, "a\uFFFD\uFFFDb\uFFFD", decodeText([]byte("a\xe4\xb8b\xff")))
	require.Equal(t, "\uFFFD", decodeText([]byte("\uFFFD")), "a real U+FFFD stays one")
	r := rand.New(rand.NewPCG(5, 6))
	for i := 0; i < 100; i++ {
		b := invalidText(r, 100)
		require.Equal(t, refText(b), decodeText(b))
	}
}

func TestCountRunesAgreesWithRuneCountOnEveryShortSequence(t *testing.T) {
	t.Parallel()
	// Every lead byte and second byte (which holds the narrower ranges),
	// with third and fourth bytes at the edges of the continuation range
	// and just outside it, between ASCII runs
	// long enough for the word-at-a-time skips.
	edges := []byte{0x41, 0x80, 0xBF, 0xC0}
	pad := []byte("0123456789abcdef0123456789abcdef0")
	buf := make([]byte, 0, 2*len(pad)+4)
	for b0 := 0x80; b0 <= 0xFF; b0++ {
		for b1 := 0; b1 <= 0xFF; b1++ {
			for _, b2 := range edges {
				for _, b3 := range edges {
					buf = append(append(append(buf[:0], pad...), byte(b0), byte(b1), b2, b3), pad...)
					for _, p := range [][]byte{buf, buf[:len(pad)+3]} {
						if got, want := countRunes(p), utf8.RuneCount(p); got != want {
							t.Fatalf("countRunes(%q) = %d, utf8.RuneCount says %d", p, got, want)
						}
					}
				}
			}
		}
	}
}

func FuzzCountRunes(f *testing.F) {
	f.Add([]byte("a日😀é\xff\xe4\xb8b"))
	f.Add([]byte("\xed\xa0\x80\xf4\x90\x80\x80\xe0\x80\x80"))
	f.Fuzz(func(t *testing.T, p []byte) {
		if got, want := countRunes(p), utf8.RuneCount(p); got != want {
			t.Fatalf("countRunes(%q) = %d, utf8.RuneCount says %d", p, got, want)
		}
	})
}
