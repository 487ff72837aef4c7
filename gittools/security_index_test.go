package gittools_test

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/binary"
	"encoding/hex"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/gittools"
)

// emptyBlob is the object id of the empty blob.
const emptyBlob = "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391"

// forgeIndex writes dir/.git/index as a version 2 index of one entry per
// name (sorted as git sorts them): a regular file with zero stat data
// whose blob is the empty blob. Git checks a name when it adds it, never
// when it reads an index, so a forged one may be "../x" or "/etc/x".
func forgeIndex(t *testing.T, dir string, names ...string) {
	t.Helper()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "empty.tmp"), nil, 0o644))
	require.Equal(t, emptyBlob, gitIn(t, dir, nil, "hash-object", "-w", "empty.tmp"))
	require.NoError(t, os.Remove(filepath.Join(dir, "empty.tmp")))
	oid, err := hex.DecodeString(emptyBlob)
	require.NoError(t, err)
	var b bytes.Buffer
	b.WriteString("DIRC")
	_ = binary.Write(&b, binary.BigEndian, []uint32{2, uint32(len(names))})
	for _, name := range names {
		start := b.Len()
		// ctime, mtime (s, ns), dev, ino, mode, uid, gid, size
		_ = binary.Write(&b, binary.BigEndian, []uint32{0, 0, 0, 0, 0, 0, 0o100644, 0, 0, 0})
		b.Write(oid)
		_ = binary.Write(&b, binary.BigEndian, uint16(len(name)))
		b.WriteString(name)
		n := b.Len() - start
		b.Write(make([]byte, (n+8)&^7-n))
	}
	sum := sha1.Sum(b.Bytes())
	b.Write(sum[:])
	require.NoError(t, os.WriteFile(filepath.Join(dir, ".git", "index"), b.Bytes(), 0o644))
}

// An index entry whose name leaves the work tree ("../…", or an absolute
// path) made a work-tree git_diff open that file and print it whole: git
// checks names when it adds them, not when it reads an index, and an
// agent that can write in the repository can write .git/index. Every
// work-tree diff now checks the index's names first and refuses, naming
// the entry; a diff of two revisions reads no index and still runs.
func TestADiffReadsNoFileAForgedIndexNamesOutside(t *testing.T) {
	outside := t.TempDir()
	secret := filepath.Join(outside, "secret.txt")
	require.NoError(t, os.WriteFile(secret, []byte("TOP SECRET outside content\n"), 0o600))
	repo := newHistoryRepo(t)
	rel, err := filepath.Rel(repo.dir, secret)
	require.NoError(t, err)
	forgeIndex(t, repo.dir, rel, secret) // "../…" sorts before "/…"

	ts, _ := newToolset(t, repo.dir)
	ctx := context.Background()
	for _, a := range []gittools.DiffArgs{{}, {Base: "HEAD"}} {
		res, err := ts.Diff(ctx, a)
		if err == nil {
			require.NotContains(t, res.Output, "TOP SECRET", "git_diff %+v printed a file outside the repository", a)
		}
		require.ErrorIs(t, err, gittools.ErrOutsideRepository, "git_diff %+v", a)
		require.Contains(t, err.Error(), filepath.Join(repo.dir, ".git", "index")+": entry")
		t.Logf("refused: %v", err)
		require.NotContains(t, err.Error(), "TOP SECRET")
	}
	res, err := ts.Diff(ctx, gittools.DiffArgs{Base: "HEAD~1", Head: "HEAD"})
	require.NoError(t, err)
	require.NotContains(t, res.Output, "TOP SECRET")
}
