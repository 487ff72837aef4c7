//go:build !linux

package jobstore

// warmHeap does nothing here: see warmheap_linux.go.
func warmHeap() {}
