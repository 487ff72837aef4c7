package prefault

import (
	"bufio"
	"os"
	"strconv"
	"strings"
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// TestTheHeapMayBeBackedByHugePages: after init, the mapping that holds the
// heap's first object is one the kernel may back with huge pages
// (THPeligible), where under transparent_hugepage "madvise" a Go heap is
// not, and where the kernel could, the 2 MiB around that object are one
// huge page already.
func TestTheHeapMayBeBackedByHugePages(t *testing.T) {
	mode, err := os.ReadFile("/sys/kernel/mm/transparent_hugepage/enabled")
	if err != nil || strings.Contains(string(mode), "[never]") {
		t.Skipf("transparent huge pages are off here (%q, %v)", mode, err)
	}
	vma := smapsOf(t, uintptr(unsafe.Pointer(first)))
	eligible, ok := vma["THPeligible"]
	if !ok {
		t.Skip("this kernel's smaps does not say THPeligible")
	}
	require.Equal(t, "1", eligible, "the heap's mapping may be backed by huge pages: %v", vma)
	t.Logf("AnonHugePages of the heap's mapping: %s", vma["AnonHugePages"])
}

// smapsOf returns the fields of the /proc/self/smaps entry whose range
// holds addr.
func smapsOf(t *testing.T, addr uintptr) map[string]string {
	f, err := os.Open("/proc/self/smaps")
	require.NoError(t, err)
	defer f.Close()
	var found map[string]string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if lo, hi, ok := strings.Cut(fields[0], "-"); ok && !strings.HasSuffix(fields[0], ":") {
			start, err1 := strconv.ParseUint(lo, 16, 64)
			end, err2 := strconv.ParseUint(hi, 16, 64)
			if err1 == nil && err2 == nil {
				if found != nil {
					return found
				}
				if uint64(addr) >= start && uint64(addr) < end {
					found = map[string]string{"range": fields[0], "perms": fields[1]}
				}
				continue
			}
		}
		if found != nil && strings.HasSuffix(fields[0], ":") && len(fields) >= 2 {
			found[strings.TrimSuffix(fields[0], ":")] = strings.Join(fields[1:], " ")
		}
	}
	require.NoError(t, sc.Err())
	require.NotNil(t, found, "no mapping holds %#x", addr)
	return found
}
