package artifacts

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// closedCapture writes content through a capture at dir/name, closes it and
// returns its summary.
func closedCapture(t *testing.T, dir, name string, content []byte) (Summary, string) {
	t.Helper()
	c, path := capture(t, dir, name, content, 4096, defaultStride)
	require.NoError(t, c.Close())
	return c.Summary(), path
}

func TestBankMovesTheLogAndIndexIntoContentAddressedStorage(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	store := &Store{Dir: filepath.Join(home, "artifacts")}
	content := trickyText(100_000)
	sum, path := closedCapture(t, home, "stdout.log", content)

	got, artifact, err := store.Bank(path, &sum)
	require.NoError(t, err)
	require.Equal(t, sum, got)
	h := sha256.Sum256(content)
	sha := hex.EncodeToString(h[:])
	require.Equal(t, filepath.Join(store.Dir, sha[:2], sha), artifact)
	require.Equal(t, artifact, store.Path(sha))
	data, err := os.ReadFile(artifact)
	require.NoError(t, err)
	require.Equal(t, content, data)
	require.FileExists(t, artifact+IndexSuffix)
	require.NoFileExists(t, path)
	require.NoFileExists(t, path+IndexSuffix)
	require.NoError(t, store.Verify(sha))

	res, err := Read(Source{Path: artifact, Final: true}, Page{Unit: UnitLines, Offset: 3, Limit: 2})
	require.NoError(t, err)
	lines := refLines(content)
	require.Equal(t, string(lines[3])+string(lines[4]), res.Text)

	again, artifact2, err := store.Bank(path, &sum)
	require.NoError(t, err, "banking again finds the artifact in place")
	require.Equal(t, sum, again)
	require.Equal(t, artifact, artifact2)
}

func TestBankStoresIdenticalContentOnce(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	store := &Store{Dir: filepath.Join(home, "artifacts")}
	content := []byte(strings.Repeat("same output\n", 5000))
	sumA, pathA := closedCapture(t, home, "a.log", content)
	sumB, pathB := closedCapture(t, home, "b.log", content)

	_, artA, err := store.Bank(pathA, &sumA)
	require.NoError(t, err)
	_, artB, err := store.Bank(pathB, &sumB)
	require.NoError(t, err)
	require.Equal(t, artA, artB)
	require.NoFileExists(t, pathA)
	require.NoFileExists(t, pathB, "the duplicate log is dropped")
	require.NoFileExists(t, pathB+IndexSuffix)

	var files []string
	require.NoError(t, filepath.WalkDir(store.Dir, func(p string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			files = append(files, filepath.Base(p))
		}
		return err
	}))
	require.ElementsMatch(t, []string{sumA.SHA256, sumA.SHA256 + IndexSuffix}, files)

	// Two empty streams (the common case) share one empty artifact.
	e1, p1 := closedCapture(t, home, "e1.log", nil)
	e2, p2 := closedCapture(t, home, "e2.log", nil)
	_, a1, err := store.Bank(p1, &e1)
	require.NoError(t, err)
	_, a2, err := store.Bank(p2, &e2)
	require.NoError(t, err)
	require.Equal(t, a1, a2)
	res, err := Read(Source{Path: a1, Final: true}, Page{Unit: UnitLines})
	require.NoError(t, err)
	require.Zero(t, res.TotalSize)
}

func TestBankWithoutSummaryScansTheOrphanedLog(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	store := &Store{Dir: filepath.Join(home, "artifacts")}
	content := append(trickyText(70_000), 0xe6)
	// A writer that died: a log with no index at all.
	path := filepath.Join(home, "orphan.log")
	require.NoError(t, os.WriteFile(path, content, 0o600))

	got, artifact, err := store.Bank(path, nil)
	require.NoError(t, err)
	want, err := Summarize(artifact)
	require.NoError(t, err)
	require.Equal(t, want, got)
	require.EqualValues(t, len(refChars(content)), got.Chars)
	require.NoError(t, store.Verify(got.SHA256))
	require.True(t, indexMatchesFile(t, artifact))
}

func TestBankTrustsTheLogOverAWrongSummary(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	store := &Store{Dir: filepath.Join(home, "artifacts")}
	sum, path := closedCapture(t, home, "out.log", []byte("first\n"))
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	require.NoError(t, err)
	_, err = f.WriteString("written after the summary\n")
	require.NoError(t, err)
	require.NoError(t, f.Close())
	sum.Capped = true

	got, artifact, err := store.Bank(path, &sum)
	require.NoError(t, err)
	data, err := os.ReadFile(artifact)
	require.NoError(t, err)
	require.Equal(t, "first\nwritten after the summary\n", string(data))
	require.EqualValues(t, len(data), got.Bytes)
	require.EqualValues(t, 2, got.Lines)
	require.True(t, got.Capped, "Capped comes from the capture")
	require.NoError(t, store.Verify(got.SHA256))
}

func TestVerifyDetectsAFlippedByteAndAMissingArtifact(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	store := &Store{Dir: filepath.Join(home, "artifacts")}
	sum, path := closedCapture(t, home, "out.log", trickyText(10_000))
	_, artifact, err := store.Bank(path, &sum)
	require.NoError(t, err)
	require.NoError(t, store.Verify(sum.SHA256))

	data, err := os.ReadFile(artifact)
	require.NoError(t, err)
	data[5000] ^= 0x01
	require.NoError(t, os.WriteFile(artifact, data, 0o600))
	err = store.Verify(sum.SHA256)
	require.ErrorIs(t, err, ErrCorrupt)
	require.ErrorContains(t, err, artifact)

	missing := strings.Repeat("ab", 32)
	err = store.Verify(missing)
	require.ErrorIs(t, err, os.ErrNotExist)
	require.ErrorContains(t, err, store.Path(missing))

	require.ErrorContains(t, store.Verify("../../etc/passwd"), "malformed sha256")
	require.ErrorContains(t, store.Verify(strings.ToUpper(sum.SHA256)), "malformed sha256")
}

func TestBankRefusesAStoreWithoutDirectoryAndAMissingLog(t *testing.T) {
	t.Parallel()
	_, _, err := (&Store{}).Bank("x.log", nil)
	require.ErrorContains(t, err, "no directory")
	store := &Store{Dir: t.TempDir()}
	_, _, err = store.Bank(filepath.Join(t.TempDir(), "gone.log"), nil)
	require.ErrorIs(t, err, os.ErrNotExist)
}

// indexMatchesFile reports whether the index beside a final log matches it.
func indexMatchesFile(t *testing.T, path string) bool {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	fi, err := f.Stat()
	require.NoError(t, err)
	return indexMatches(path+IndexSuffix, f, fi.Size())
}

func TestBankOfAClosedCaptureStillRebuildsADamagedIndex(t *testing.T) {
	t.Parallel()
	for name, damage := range staleCases {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			home := t.TempDir()
			store := &Store{Dir: filepath.Join(home, "artifacts")}
			sum, path := closedCapture(t, home, "out.log", trickyText(200_000))
			fi, err := os.Stat(path)
			require.NoError(t, err)
			f, err := os.Open(path)
			require.NoError(t, err)
			defer f.Close()
			require.True(t, sealedIndexMatches(path, f, fi, &sum), "the capture's own index, untouched")
			damage(t, path, path+IndexSuffix)
			content, err := os.ReadFile(path)
			require.NoError(t, err)

			got, artifact, err := store.Bank(path, &sum)
			require.NoError(t, err)
			require.True(t, indexMatchesFile(t, artifact), "the banked index describes the banked log")
			want := sha256.Sum256(content)
			if name == "log replaced" {
				require.Equal(t, hex.EncodeToString(want[:]), got.SHA256, "the log is the truth")
			}
			require.NoError(t, store.Verify(got.SHA256))
		})
	}
}

func TestSealedIndexIsForgottenOnceBankedAndNotTrustedForAnotherFile(t *testing.T) {
	t.Parallel()
	home := t.TempDir()
	sum, path := closedCapture(t, home, "out.log", trickyText(100_000))
	// Another file of the same size and name: not what the capture closed.
	data, err := os.ReadFile(path)
	require.NoError(t, err)
	require.NoError(t, os.Remove(path))
	require.NoError(t, os.WriteFile(path, data, 0o600))
	fi, err := os.Stat(path)
	require.NoError(t, err)
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	require.False(t, sealedIndexMatches(path, f, fi, &sum))

	sum2, path2 := closedCapture(t, home, "out2.log", trickyText(100_000))
	store := &Store{Dir: filepath.Join(home, "artifacts")}
	_, _, err = store.Bank(path2, &sum2)
	require.NoError(t, err)
	sealed.mu.Lock()
	_, kept := sealed.byLog[path2]
	sealed.mu.Unlock()
	require.False(t, kept, "a banked log is forgotten")
}
