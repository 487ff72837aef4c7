//go:build !linux

package launch

// StartEarly does nothing here: detached supervisors are for Linux.
func StartEarly(postgres bool) {}

// DiscardEarly does nothing here.
func DiscardEarly() {}
