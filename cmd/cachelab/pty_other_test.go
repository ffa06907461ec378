//go:build !linux

package main

import (
	"errors"
	"os"
)

// openPTY is Linux-only here; the scripts that start commands say
// [!linux] skip.
func openPTY() (ptm, tty *os.File, err error) {
	return nil, nil, errors.New("start: a terminal for the command needs Linux")
}
