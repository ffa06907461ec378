package main

import (
	"fmt"
	"os"
	"syscall"
	"unsafe"
)

// openPTY opens a pseudo-terminal: ptm is the side a terminal emulator
// holds, tty the side a program reads as its terminal. (testscript's own
// pty package is internal; this is the few lines of it the start command
// needs.)
func openPTY() (ptm, tty *os.File, err error) {
	ptm, err = os.OpenFile("/dev/ptmx", os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		return nil, nil, err
	}
	var unlock int32
	var n uint32
	if err := ioctl(ptm, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)); err != nil {
		ptm.Close()
		return nil, nil, fmt.Errorf("unlock pty: %w", err)
	}
	if err := ioctl(ptm, syscall.TIOCGPTN, unsafe.Pointer(&n)); err != nil {
		ptm.Close()
		return nil, nil, fmt.Errorf("pty number: %w", err)
	}
	tty, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		ptm.Close()
		return nil, nil, err
	}
	return ptm, tty, nil
}

func ioctl(f *os.File, req uintptr, arg unsafe.Pointer) error {
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), req, uintptr(arg)); errno != 0 {
		return errno
	}
	return nil
}
