package artifacts

import (
	"bytes"
	"encoding/binary"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestIndexCheckpointsAreExactCharacterBoundaries(t *testing.T) {
	t.Parallel()
	r := rand.New(rand.NewPCG(17, 18))
	content := append(trickyText(3000), invalidText(r, 3000)...)
	const stride = 16
	_, recs, err := scanLog(bytes.NewReader(content), stride, false)
	require.NoError(t, err)
	ix := memIndex(stride, recs)
	require.EqualValues(t, len(content)/stride, ix.n)

	starts := map[int]int{} // byte offset -> characters before it
	pos := 0
	for i, c := range refChars(content) {
		starts[pos] = i
		pos += len(c)
	}
	for i := int64(0); i < ix.n; i++ {
		c, err := ix.record(i)
		require.NoError(t, err)
		chars, ok := starts[int(c.pos)]
		require.True(t, ok, "checkpoint %d at %d is not where a character starts", i, c.pos)
		require.EqualValues(t, chars, c.chars)
		require.EqualValues(t, bytes.Count(content[:c.pos], newline), c.lines)
		require.Equal(t, content[c.pos-prevLen:c.pos], c.prev[:])
		require.NoError(t, verifyCheckpoint(bytes.NewReader(content), c))
	}
}

// staleCases damage a final log's index in the ways Read must not trust.
var staleCases = map[string]func(t *testing.T, log, idx string){
	"missing": func(t *testing.T, _, idx string) { require.NoError(t, os.Remove(idx)) },
	"bad header": func(t *testing.T, _, idx string) {
		patchFile(t, idx, 0, []byte("notindex"))
	},
	"bad stride": func(t *testing.T, _, idx string) {
		patchFile(t, idx, 12, binary.LittleEndian.AppendUint32(nil, 3))
	},
	"truncated": func(t *testing.T, _, idx string) {
		fi, err := os.Stat(idx)
		require.NoError(t, err)
		require.NoError(t, os.Truncate(idx, fi.Size()-recordSize-5))
	},
	"checkpoint beyond the log": func(t *testing.T, _, idx string) {
		patchFile(t, idx, headerSize+recordSize, binary.LittleEndian.AppendUint64(nil, 1<<40))
	},
	"last record miscounted": func(t *testing.T, _, idx string) {
		fi, err := os.Stat(idx)
		require.NoError(t, err)
		off := fi.Size() - recordSize + 8
		b := make([]byte, 8)
		f, err := os.Open(idx)
		require.NoError(t, err)
		_, err = f.ReadAt(b, off)
		require.NoError(t, err)
		require.NoError(t, f.Close())
		patchFile(t, idx, off, binary.LittleEndian.AppendUint64(nil, binary.LittleEndian.Uint64(b)+1))
	},
	"log replaced": func(t *testing.T, log, _ string) {
		data, err := os.ReadFile(log)
		require.NoError(t, err)
		// Same size, other content: the checkpoints' bytes tell.
		data = append([]byte("x"), data[:len(data)-1]...)
		require.NoError(t, os.WriteFile(log, data, 0o600))
	},
	"index of another log": func(t *testing.T, log, idx string) {
		other := append([]byte("x"), trickyText(300_000)...)
		_, recs, err := scanLog(bytes.NewReader(other[:300_000]), defaultStride, false)
		require.NoError(t, err)
		require.NoError(t, writeIndexFile(idx, defaultStride, recs))
	},
}

func patchFile(t *testing.T, path string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteAt(b, off)
	require.NoError(t, err)
	require.NoError(t, f.Close())
}

func TestReadRebuildsAStaleOrMissingIndexFromTheLog(t *testing.T) {
	t.Parallel()
	for name, damage := range staleCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			dir := t.TempDir()
			content := trickyText(300_000)
			c, path := capture(t, dir, "out.log", content, 8192, defaultStride)
			require.NoError(t, c.Close())
			damage(t, path, path+IndexSuffix)
			content, err := os.ReadFile(path)
			require.NoError(t, err)
			chars := refChars(content)
			lines := refLines(content)

			// A live reader scans without rewriting anything.
			live := Source{Path: path}
			res, err := Read(live, Page{Unit: UnitChars, Offset: int64(len(chars) - 10), Limit: 5})
			require.NoError(t, err)
			require.Equal(t, refText(bytes.Join(chars[len(chars)-10:len(chars)-5], nil)), res.Text)

			final := Source{Path: path, Final: true}
			for _, o := range []int{0, 1, len(lines) / 2, len(lines) - 1} {
				res, err := Read(final, Page{Unit: UnitLines, Offset: int64(o), Limit: 1})
				require.NoError(t, err)
				require.Equal(t, string(lines[o]), res.Text, "line %d", o)
				require.EqualValues(t, len(lines), res.TotalSize)
			}
			for _, o := range []int{0, len(chars) / 3, len(chars) - 1} {
				res, err := Read(final, Page{Unit: UnitChars, Offset: int64(o), Limit: 2})
				require.NoError(t, err)
				require.Equal(t, refText(bytes.Join(chars[o:min(o+2, len(chars))], nil)), res.Text, "char %d", o)
				require.EqualValues(t, len(chars), res.TotalSize)
			}
			require.True(t, indexMatchesFile(t, path), "the final log's index was rewritten")
			_, recs, err := scanLog(bytes.NewReader(content), defaultStride, false)
			require.NoError(t, err)
			idx, err := os.ReadFile(path + IndexSuffix)
			require.NoError(t, err)
			require.Equal(t, append(encodeHeader(defaultStride), recs...), idx)
			matches, err := filepath.Glob(filepath.Join(dir, "*.tmp*"))
			require.NoError(t, err)
			require.Empty(t, matches, "no temporary files left")
		})
	}
}

func TestBankRebuildsAStaleIndex(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	store := &Store{Dir: filepath.Join(home, "artifacts")}
	sum, path := closedCapture(t, home, "out.log", trickyText(200_000))
	staleCases["checkpoint beyond the log"](t, path, path+IndexSuffix)
	require.False(t, indexMatchesFile(t, path))
	got, artifact, err := store.Bank(path, &sum)
	require.NoError(t, err)
	require.Equal(t, sum, got)
	require.True(t, indexMatchesFile(t, artifact))
}

func TestLiveIndexMayLagOrLeadTheLog(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	content := trickyText(300_000)
	c, path := capture(t, dir, "live.log", content, 1000, 16)
	defer c.Close()
	_ = c.Summary() // the background indexing has caught up
	lines := refLines(content)

	// Lead: the reader sees a shorter log than the index describes.
	short := filepath.Join(dir, "short.log")
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	data = data[:bytes.LastIndexByte(data[:len(data)-50_000], '\n')+1]
	require.NoError(t, os.WriteFile(short, data, 0o600))
	idx, err := os.ReadFile(path + IndexSuffix)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(short+IndexSuffix, idx, 0o600))
	shortLines := refLines(data)
	res, err := Read(Source{Path: short}, Page{Unit: UnitLines, Offset: int64(len(shortLines) - 3)})
	require.NoError(t, err)
	require.Equal(t, string(bytes.Join(shortLines[len(shortLines)-3:], nil)), res.Text)

	// Lag: the index holds only its first records.
	require.NoError(t, os.WriteFile(short+IndexSuffix, idx[:headerSize+100*recordSize], 0o600))
	res, err = Read(Source{Path: short}, Page{Unit: UnitLines, Offset: int64(len(shortLines) - 3)})
	require.NoError(t, err)
	require.Equal(t, string(bytes.Join(shortLines[len(shortLines)-3:], nil)), res.Text)

	res, err = Read(Source{Path: path}, Page{Unit: UnitLines, Offset: int64(len(lines) - 2)})
	require.NoError(t, err)
	require.Equal(t, string(bytes.Join(lines[len(lines)-2:], nil)), res.Text)
}

func TestSearchFindsPagesWhereTheGuessFromAnEvenSpreadMisses(t *testing.T) {
	t.Parallel()
	// ASCII lines first, then four-byte characters without newlines, then
	// ASCII again: the characters and lines are far from evenly spread, so
	// the first block the search reads is mostly the wrong one.
	var content []byte
	content = append(content, bytes.Repeat([]byte("0123456789abcde\n"), 6000)...)
	content = append(content, bytes.Repeat([]byte("😀"), 30000)...)
	content = append(content, bytes.Repeat([]byte("x\n"), 3000)...)
	dir := t.TempDir()
	c, path := capture(t, dir, "uneven.log", content, 4096, 16)
	require.NoError(t, c.Close())
	chars, lines := refChars(content), refLines(content)
	src := Source{Path: path, Final: true}
	for _, o := range []int{0, 1, 5000, 95999, 96000, 96001, 110000, 125999, 126000, 126001, len(chars) - 3} {
		res, err := Read(src, Page{Unit: UnitChars, Offset: int64(o), Limit: 3})
		require.NoError(t, err)
		require.Equal(t, refText(bytes.Join(chars[o:min(o+3, len(chars))], nil)), res.Text, "char %d", o)
	}
	for _, o := range []int{0, 1, 3000, 5999, 6000, 6001, 7500, len(lines) - 1} {
		res, err := Read(src, Page{Unit: UnitLines, Offset: int64(o), Limit: 1})
		require.NoError(t, err)
		require.Equal(t, string(lines[o]), res.Text, "line %d", o)
	}
}

// TestLiveIndexIsCompleteOnceTheCaptureCatchesUp: the digester gathers
// checkpoints and appends them to the index in runs, not one write per
// batch; whenever it has caught up with the writer (Summary waits for
// that), a live log's index holds every checkpoint of what was written,
// before Close, exactly those a rebuild finds.
func TestLiveIndexIsCompleteOnceTheCaptureCatchesUp(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	content := trickyText(3 << 20)
	const stride = defaultStride // 16 records per batch of 256 KiB: a run is 8 batches
	c, path := capture(t, dir, "live.log", content[:len(content)/3], 4096, stride)
	defer c.Close()
	for _, upTo := range []int{len(content) / 3, len(content)} {
		if upTo == len(content) {
			writeChunks(t, c, content[len(content)/3:], 100_000)
		}
		require.EqualValues(t, upTo, c.Summary().Bytes) // the digester has caught up
		_, recs, err := scanLog(bytesReader(content[:upTo]), stride, false)
		require.NoError(t, err)
		idx, err := os.ReadFile(path + IndexSuffix)
		require.NoError(t, err)
		require.NotZero(t, len(recs)%indexFlush, "records the last run has not taken")
		require.Equal(t, append(encodeHeader(stride), recs...), idx, "the live index at %d bytes", upTo)
	}
}

// TestIndexerGathersCheckpointsWithoutAllocating: once its buffer has
// grown, following a batch and clearing its pending records allocates
// nothing (one allocation per batch was garbage, and fresh heap, for every
// 256 KiB of every capture).
func TestIndexerGathersCheckpointsWithoutAllocating(t *testing.T) {
	batch := trickyText(batchSize)[:batchSize]
	ix := newIndexer(defaultStride)
	ix.write(batch)
	ix.clearPending()
	allocs := testing.AllocsPerRun(20, func() {
		ix.write(batch)
		if len(ix.pending()) == 0 {
			t.Fatal("a batch of 256 KiB makes checkpoints")
		}
		ix.clearPending()
	})
	require.Zero(t, allocs)
}

// TestDigesterStartsOnceThreeBatchesWait: the background hashing and
// indexing start only when startQueued batches wait for them (or when
// Summary or Close asks), and then catch up with the writer, leaving the
// live index complete for everything handed over.
func TestDigesterStartsOnceThreeBatchesWait(t *testing.T) {
	t.Parallel()
	content := trickyText((startQueued + 1) * batchSize)
	const stride = defaultStride
	// Two batches handed over and one started: nothing has run, so no
	// index exists yet.
	c, path := capture(t, t.TempDir(), "lazy.log", content[:(startQueued-1)*batchSize+1], 4096, stride)
	defer c.Close()
	_, err := os.Stat(path + IndexSuffix)
	require.ErrorIs(t, err, os.ErrNotExist, "the digester ran with %d batches waiting", startQueued-1)

	// The third batch starts it; it catches up with the three and appends
	// their checkpoints, with no Summary asking.
	writeChunks(t, c, content[(startQueued-1)*batchSize+1:startQueued*batchSize+1], 4096)
	_, recs, err := scanLog(bytesReader(content[:startQueued*batchSize]), stride, false)
	require.NoError(t, err)
	want := append(encodeHeader(stride), recs...)
	deadline := time.Now().Add(30 * time.Second)
	for {
		idx, err := os.ReadFile(path + IndexSuffix)
		if err == nil && len(idx) >= len(want) {
			require.Equal(t, want, idx, "the live index after %d batches", startQueued)
			break
		}
		require.True(t, time.Now().Before(deadline), "no index for %d waiting batches after 30 s (err %v, %d bytes)", startQueued, err, len(idx))
		time.Sleep(5 * time.Millisecond) // polls the file the digester appends to
	}
	require.EqualValues(t, startQueued*batchSize+1, c.Summary().Bytes)
}
