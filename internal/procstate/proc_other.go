//go:build !linux

package procstate

import (
	"errors"
	"fmt"
	"io/fs"
	"net/netip"
	"runtime"
)

// Tree is Linux's Tree; here it returns an error wrapping
// errors.ErrUnsupported.
func Tree(root int) ([]int, error) { return nil, unsupported("Tree") }

// Socket is Linux's Socket; here it returns an error wrapping
// errors.ErrUnsupported.
func Socket(local, remote netip.AddrPort) (s Sock, ok bool, err error) {
	return Sock{}, false, unsupported("Socket")
}

// Owners is Linux's Owners; here it returns an error wrapping
// errors.ErrUnsupported.
func Owners(inodes []uint64) (map[uint64][]int, error) { return nil, unsupported("Owners") }

// Look is Linux's Look; here it returns an error wrapping
// errors.ErrUnsupported.
func Look(pids []int) (Snapshot, error) { return Snapshot{}, unsupported("Look") }

func unsupported(what string) error {
	return fmt.Errorf("procstate: %s reads Linux's /proc, and this is %s: %w", what, runtime.GOOS, errors.ErrUnsupported)
}

// gone reports whether err says a /proc file went away.
func gone(err error) bool { return errors.Is(err, fs.ErrNotExist) }
