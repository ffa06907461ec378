//go:build !linux

package sim

// keepStderr is Linux-only (see fuzz_stderr_linux_test.go); elsewhere a
// fuzzing worker's crash output is lost, as go test leaves it.
func keepStderr(string) error { return nil }
