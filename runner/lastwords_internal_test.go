package runner

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestLastWordsKeepsBothEndsOfALongLogAndAllOfAShortOne reads real log
// files: none, empty, short (whole, one line, no terminal escapes) and long
// (its first and last lastWordsEnds bytes, and nothing of its middle).
func TestLastWordsKeepsBothEndsOfALongLogAndAllOfAShortOne(t *testing.T) {
	dir := t.TempDir()
	require.Empty(t, lastWords(dir), "no log")
	log := filepath.Join(dir, supervisorLogName)
	require.NoError(t, os.WriteFile(log, nil, 0o600))
	require.Empty(t, lastWords(dir), "an empty log")
	require.Equal(t, "msg", withLastWords("msg", dir))

	require.NoError(t, os.WriteFile(log, []byte("panic: boom\n\x1b[31mgoroutine 1\t[running]:\n"), 0o600))
	require.Equal(t, "panic: boom [31mgoroutine 1 [running]:", lastWords(dir))
	require.Equal(t, "msg; its log reads: panic: boom [31mgoroutine 1 [running]:", withLastWords("msg", dir))

	head := "fatal error: " + strings.Repeat("h", lastWordsEnds-len("fatal error: "))
	middle := strings.Repeat("m", 10000)
	tail := strings.Repeat("t", lastWordsEnds-len("exit status 2")) + "exit status 2"
	require.NoError(t, os.WriteFile(log, []byte(head+middle+tail), 0o600))
	w := lastWords(dir)
	require.Equal(t, head+" … "+tail, w)
	require.NotContains(t, w, "m")
}
