package procstate

import (
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"
	"net/netip"
	"strconv"
	"strings"
	"time"
)

// This file reads the text of /proc's files. It knows their formats and
// nothing about where they live: procfs.go opens them.

// stat is what Tree and Look take from a /proc/PID/stat line.
type stat struct {
	pid   int
	comm  string
	state byte
	ppid  int
}

// parseStat reads the start of a stat line, "pid (comm) state ppid ...".
// comm is whatever name the process gave itself, spaces and parentheses
// included, so it runs from the first "(" to the last ")": every field
// after it is a number or a single letter.
func parseStat(line string) (stat, error) {
	open := strings.IndexByte(line, '(')
	end := strings.LastIndexByte(line, ')')
	if open < 1 || end < open || line[open-1] != ' ' {
		return stat{}, fmt.Errorf("stat line %q: no \"pid (comm)\"", clip(line))
	}
	pid, err := strconv.Atoi(line[:open-1])
	if err != nil || pid <= 0 {
		return stat{}, fmt.Errorf("stat line %q: pid %q is not a positive number", clip(line), clip(line[:open-1]))
	}
	rest := strings.Fields(line[end+1:])
	if len(rest) < 2 || len(rest[0]) != 1 {
		return stat{}, fmt.Errorf("stat line %q: no state and ppid after the comm", clip(line))
	}
	ppid, err := strconv.Atoi(rest[1])
	if err != nil || ppid < 0 {
		return stat{}, fmt.Errorf("stat line %q: ppid %q is not a number", clip(line), clip(rest[1]))
	}
	return stat{pid: pid, comm: line[open+1 : end], state: rest[0][0], ppid: ppid}, nil
}

// parseSchedstat reads /proc/PID/task/TID/schedstat: "run wait slices",
// the nanoseconds the thread has run, the nanoseconds it has waited for a
// CPU, and how many times it has been put on one.
func parseSchedstat(text string) (slices uint64, run time.Duration, err error) {
	f := strings.Fields(text)
	if len(f) != 3 {
		return 0, 0, fmt.Errorf("schedstat %q: want 3 fields, have %d", clip(text), len(f))
	}
	ns, err1 := strconv.ParseUint(f[0], 10, 63)
	slices, err2 := strconv.ParseUint(f[2], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, 0, fmt.Errorf("schedstat %q: %w", clip(text), err)
	}
	return slices, time.Duration(ns), nil
}

// parseSyscall reads /proc/PID/task/TID/syscall, which has three forms:
//
//	running                               the thread is on a CPU
//	-1 0x<sp> 0x<pc>                      blocked outside a system call
//	232 0x5 0x7ff... 0x80 0x31 ... <sp> <pc>  blocked in call 232, six arguments
//
// arch names the system call table (runtime.GOARCH) for decodeTimer.
func parseSyscall(text, arch string) (Syscall, error) {
	f := strings.Fields(text)
	if len(f) == 1 && f[0] == "running" {
		return Syscall{Running: true}, nil
	}
	if len(f) == 0 {
		return Syscall{}, errors.New("syscall: empty")
	}
	nr, err := strconv.Atoi(f[0])
	switch {
	case err != nil:
		return Syscall{}, fmt.Errorf("syscall %q: number: %w", clip(text), err)
	case nr < 0 && len(f) == 3:
		return Syscall{Nr: -1}, nil
	case nr < 0 || len(f) != 9:
		return Syscall{}, fmt.Errorf("syscall %q: want a number, 6 arguments, sp and pc", clip(text))
	}
	s := Syscall{Nr: nr}
	for i := range s.Args {
		if s.Args[i], err = parseHex64(f[1+i]); err != nil {
			return Syscall{}, fmt.Errorf("syscall %q: argument %d: %w", clip(text), i+1, err)
		}
	}
	s.Timer = decodeTimer(arch, nr, s.Args)
	return s, nil
}

// parseHex64 reads the kernel's "0x%llx".
func parseHex64(s string) (uint64, error) {
	digits, ok := strings.CutPrefix(s, "0x")
	if !ok {
		return 0, fmt.Errorf("%q has no 0x", clip(s))
	}
	return strconv.ParseUint(digits, 16, 64)
}

// timerCalls names the system calls that end by themselves after a
// timeout, in each architecture's table (arch/x86/entry/syscalls/
// syscall_64.tbl, and include/uapi/asm-generic/unistd.h for arm64, which
// has no epoll_wait).
var timerCalls = map[string]map[int]string{
	"amd64": {35: "nanosleep", 230: "clock_nanosleep", 232: "epoll_wait", 281: "epoll_pwait", 441: "epoll_pwait2"},
	"arm64": {22: "epoll_pwait", 101: "nanosleep", 115: "clock_nanosleep", 441: "epoll_pwait2"},
}

// decodeTimer reads the timeout of a call in timerCalls. For epoll_wait
// and epoll_pwait it is the fourth argument, a C int of milliseconds, any
// negative value meaning none. For epoll_pwait2 the fourth argument points
// to a timespec, nil meaning none. The sleeps take a pointer that is never
// nil.
func decodeTimer(arch string, nr int, args [6]uint64) Timer {
	call := timerCalls[arch][nr]
	switch call {
	case "":
		return Timer{}
	case "epoll_wait", "epoll_pwait":
		ms := int32(uint32(args[3])) // the kernel reads only the int's 32 bits
		if ms < 0 {
			return Timer{Call: call, Timeout: -1, Known: true}
		}
		return Timer{Call: call, Timeout: time.Duration(ms) * time.Millisecond, Known: true}
	case "epoll_pwait2":
		if args[3] == 0 {
			return Timer{Call: call, Timeout: -1, Known: true}
		}
	}
	return Timer{Call: call}
}

// parseTCPLine reads one socket line of /proc/net/tcp or tcp6:
//
//	sl  local_address rem_address   st tx_queue:rx_queue tr:tm->when retrnsmt uid timeout inode ...
//	0: 0100007F:1F90 0100007F:A2C4 01 00000000:000003E8 00:00000000 00000000 0 0 4711 ...
func parseTCPLine(line string) (Sock, error) {
	f := strings.Fields(line)
	if len(f) < 10 {
		return Sock{}, fmt.Errorf("socket line %q: want at least 10 fields, have %d", clip(line), len(f))
	}
	local, err1 := parseSockAddr(f[1])
	remote, err2 := parseSockAddr(f[2])
	state, err3 := strconv.ParseUint(f[3], 16, 8)
	tx, rx, _ := strings.Cut(f[4], ":")
	txq, err4 := strconv.ParseUint(tx, 16, 64)
	rxq, err5 := strconv.ParseUint(rx, 16, 64)
	inode, err6 := strconv.ParseUint(f[9], 10, 64)
	if err := errors.Join(err1, err2, err3, err4, err5, err6); err != nil {
		return Sock{}, fmt.Errorf("socket line %q: %w", clip(line), err)
	}
	return Sock{Local: local, Remote: remote, State: TCPState(state),
		TxQueue: txq, RxQueue: rxq, Inode: inode}, nil
}

// parseSockAddr reads an address of /proc/net/tcp: hex digits, a colon,
// and the port in hex. The kernel prints the address as 32-bit words in
// the machine's byte order (one word for IPv4, four for IPv6), so
// 127.0.0.1 is "0100007F" on a little-endian machine. An IPv4-mapped IPv6
// address, from an IPv6 socket talking to an IPv4 peer, is unmapped.
func parseSockAddr(s string) (netip.AddrPort, error) {
	hexAddr, hexPort, ok := strings.Cut(s, ":")
	if !ok || (len(hexAddr) != 8 && len(hexAddr) != 32) {
		return netip.AddrPort{}, fmt.Errorf("address %q: want 8 or 32 hex digits, a colon and a port", clip(s))
	}
	port, err := strconv.ParseUint(hexPort, 16, 16)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("address %q: port: %w", clip(s), err)
	}
	raw, err := hex.DecodeString(hexAddr)
	if err != nil {
		return netip.AddrPort{}, fmt.Errorf("address %q: %w", clip(s), err)
	}
	for w := 0; w < len(raw); w += 4 { // each word from big-endian text to memory order
		binary.NativeEndian.PutUint32(raw[w:], binary.BigEndian.Uint32(raw[w:]))
	}
	addr, _ := netip.AddrFromSlice(raw) // 4 or 16 bytes: always ok
	return netip.AddrPortFrom(addr.Unmap(), uint16(port)), nil
}

// clip shortens text quoted in an error to its first 80 bytes.
func clip(s string) string {
	if len(s) > 80 {
		return s[:80] + "..."
	}
	return s
}
