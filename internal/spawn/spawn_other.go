//go:build !linux

package spawn

// StartEarly does nothing here: detached supervisors are for Linux.
func StartEarly(postgres bool) {}

// DiscardEarly does nothing here.
func DiscardEarly() {}
