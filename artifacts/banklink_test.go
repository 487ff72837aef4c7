package artifacts_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/bgcmd/bgcmd/artifacts"
)

func TestBankLinkLeavesTheLogAndBanksItsContent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := &artifacts.Store{Dir: filepath.Join(dir, "artifacts")}
	log := filepath.Join(dir, "job", "stdout.log")
	require.NoError(t, os.MkdirAll(filepath.Dir(log), 0o700))
	require.NoError(t, os.WriteFile(log, []byte("hello\n"), 0o600))

	sum, path, err := store.BankLink(log, nil)
	require.NoError(t, err)
	require.EqualValues(t, 6, sum.Bytes)
	require.Equal(t, store.Path(sum.SHA256), path)
	require.FileExists(t, log, "the log stays until its job is settled")
	require.NoError(t, store.Verify(sum.SHA256))

	// Banking again (a reconciler that died before its settle) banks the same.
	again, _, err := store.BankLink(log, nil)
	require.NoError(t, err)
	require.Equal(t, sum, again)

	// Once the log is gone (the job directory removed), the artifact stays.
	require.NoError(t, os.Remove(log))
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "hello\n", string(got))
}

func TestBankLinkReplacesACorruptArtifactOfTheSameName(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := &artifacts.Store{Dir: filepath.Join(dir, "artifacts")}
	log := filepath.Join(dir, "stdout.log")
	require.NoError(t, os.WriteFile(log, []byte("the true content\n"), 0o600))
	sum, err := artifacts.Summarize(log)
	require.NoError(t, err)
	require.NoError(t, os.MkdirAll(filepath.Dir(store.Path(sum.SHA256)), 0o700))
	require.NoError(t, os.WriteFile(store.Path(sum.SHA256), []byte("torn"), 0o600))

	_, path, err := store.BankLink(log, nil)
	require.NoError(t, err)
	got, err := os.ReadFile(path)
	require.NoError(t, err)
	require.Equal(t, "the true content\n", string(got))
	require.NoError(t, store.Verify(sum.SHA256))
}

func TestBankLinkFindsALogBankedBeforeByAMove(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	store := &artifacts.Store{Dir: filepath.Join(dir, "artifacts")}
	log := filepath.Join(dir, "stdout.log")
	require.NoError(t, os.WriteFile(log, []byte("moved\n"), 0o600))
	sum, _, err := store.Bank(log, nil)
	require.NoError(t, err)
	require.NoFileExists(t, log)

	got, path, err := store.BankLink(log, &sum)
	require.NoError(t, err)
	require.Equal(t, sum, got)
	require.Equal(t, store.Path(sum.SHA256), path)
}
