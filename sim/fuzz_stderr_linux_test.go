package sim

import (
	"os"
	"syscall"
)

// keepStderr sends this process's standard error (file descriptor 2) to
// the file at path, appending. A fuzzing worker's output is thrown away
// by go test, and a panic in one of the runner's goroutines ends the
// worker with exit status 2 and nothing else; written here, the panic's
// message and stacks survive.
func keepStderr(path string) error {
	f, err := os.OpenFile(path, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	return syscall.Dup3(int(f.Fd()), 2, 0)
}
