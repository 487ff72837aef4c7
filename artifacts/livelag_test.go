package artifacts

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestALiveIndexAsFarBehindAsACaptureLeavesItIsUsedNotRebuilt: a capture
// written flat out leaves its index behind its log by up to the
// checkpoints the digester has not yet appended (one run short of
// indexFlush), the batch it is hashing, the maxQueued batches waiting and
// the one the writer is filling. A reader of the live log must page
// through that index as it is. Rebuilding it meant scanning the whole
// live log, in memory, for every page: a readiness wait on a 1 GiB log
// that met such a moment peaked at 131 MiB.
func TestALiveIndexAsFarBehindAsACaptureLeavesItIsUsedNotRebuilt(t *testing.T) {
	t.Parallel()
	const stride = defaultStride
	lag := int64(indexFlush/recordSize)*stride + (maxQueued+2)*batchSize
	content := trickyText(4 * int(lag))
	dir := t.TempDir()
	full := filepath.Join(dir, "full.log")
	behind := filepath.Join(dir, "behind.log")
	sum, recs, err := scanLog(bytesReader(content), stride, false)
	require.NoError(t, err)
	// Keep the records up to lag bytes before the end: the last kept one
	// marks k*stride, with k the fewest that leave no more than lag.
	k := (int64(len(content)) - lag + stride - 1) / stride
	require.LessOrEqual(t, int64(len(content))-k*stride, lag)
	for path, recs := range map[string][]byte{full: recs, behind: recs[:k*recordSize]} {
		require.NoError(t, os.WriteFile(path, content, 0o600))
		require.NoError(t, os.WriteFile(path+IndexSuffix, append(encodeHeader(stride), recs...), 0o600))
	}
	pages := map[string]Page{
		"lines from the start": {Unit: UnitLines, Limit: 3},
		"lines near the end":   {Unit: UnitLines, Offset: sum.Lines - 50, Limit: 3},
		"the last lines":       {Unit: UnitLines, Offset: sum.Lines - 2},
		"tail":                 {Unit: UnitLines, Tail: 4},
		"chars":                {Unit: UnitChars, Offset: sum.Chars / 2, Limit: 100},
		"chars near the end":   {Unit: UnitChars, Offset: sum.Chars - 1000, Limit: 100},
		"bytes at the end":     {Unit: UnitBytes, Offset: int64(len(content)) - 100, Limit: 100},
		"grep":                 {Unit: UnitLines, Offset: 5, Grep: "日本", MaxMatches: 2},
		"grep near the end":    {Unit: UnitLines, Offset: sum.Lines - 40, Grep: "日本"},
	}
	for name, p := range pages {
		want, err := Read(Source{Path: full}, p)
		require.NoError(t, err, name)
		unit, re, err := p.check()
		require.NoError(t, err, name)
		v, err := openView(Source{Path: behind})
		require.NoError(t, err, name)
		v.needChars = unit == UnitChars
		got, err := v.read(unit, re, p)
		rebuilt := v.rebuilt
		v.close()
		require.NoError(t, err, "%s: the index %d bytes behind is not stale", name, int64(len(content))-k*stride)
		require.False(t, rebuilt, "%s: the live log was rescanned", name)
		require.Equal(t, want, got, name)
		require.True(t, len(got.Text) > 0 || len(got.Matches) > 0, "%s: a page with something on it", name)
	}
}

// TestALiveIndexsClaimedStrideDoesNotWidenWhatAReaderTakesIn: the bound
// is the capture's, whatever stride an index's header gives. A header
// claiming the largest stride (the job could have written it) with its
// last record 5 MiB behind the log is stale: the page comes from a
// rebuild, not from reading 5 MiB past the record on every page.
func TestALiveIndexsClaimedStrideDoesNotWidenWhatAReaderTakesIn(t *testing.T) {
	t.Parallel()
	content := trickyText(8 << 20)
	dir := t.TempDir()
	full := filepath.Join(dir, "full.log")
	wide := filepath.Join(dir, "wide.log")
	_, recs, err := scanLog(bytesReader(content), maxStride, false)
	require.NoError(t, err)
	require.Len(t, recs, 8*recordSize)
	for path, recs := range map[string][]byte{full: recs, wide: recs[:3*recordSize]} {
		require.NoError(t, os.WriteFile(path, content, 0o600))
		require.NoError(t, os.WriteFile(path+IndexSuffix, append(encodeHeader(maxStride), recs...), 0o600))
	}
	p := Page{Unit: UnitLines, Limit: 3}
	unit, re, err := p.check()
	require.NoError(t, err)
	v, err := openView(Source{Path: wide})
	require.NoError(t, err)
	defer v.close()
	_, err = v.read(unit, re, p)
	require.ErrorIs(t, err, errStaleIndex, "%d bytes past the last record", len(content)-3*maxStride)
	want, err := Read(Source{Path: full}, p)
	require.NoError(t, err)
	got, err := Read(Source{Path: wide}, p)
	require.NoError(t, err)
	require.Equal(t, want, got, "the rebuilt index serves the same page")
}
