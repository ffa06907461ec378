package procstate

import (
	"encoding/binary"
	"fmt"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestParseStat(t *testing.T) {
	for _, tc := range []struct {
		line string
		want stat
	}{
		{"4711 (kube-ctrl) S 4700 4711 4700 0 -1 4194560 ...", stat{4711, "kube-ctrl", 'S', 4700}},
		{"12 (a b) R 1 12", stat{12, "a b", 'R', 1}},
		// comm may hold parentheses, even ") S 1": only the last ")" ends it.
		{"12 (x) S 99 (y)) D 3 12 12", stat{12, "x) S 99 (y)", 'D', 3}},
		{"1 () S 0", stat{1, "", 'S', 0}},
		{"7 ((() t 1\n", stat{7, "((", 't', 1}},
	} {
		got, err := parseStat(tc.line)
		if err != nil || got != tc.want {
			t.Errorf("parseStat(%q) = %+v, %v; want %+v", tc.line, got, err, tc.want)
		}
	}
}

func TestParseStatRejects(t *testing.T) {
	for _, line := range []string{
		"", "12", "12 (x", "12 x) S 1", "(x) S 1", "12(x) S 1", "0 (x) S 1", "-3 (x) S 1",
		"ab (x) S 1", "12 (x)", "12 (x) S", "12 (x) SS 1", "12 (x) S -1", "12 (x) S p",
	} {
		if got, err := parseStat(line); err == nil {
			t.Errorf("parseStat(%q) = %+v, want an error", line, got)
		}
	}
}

// FuzzParseStat checks that parseStat never panics, and that what it
// accepts it reads back the same when written out again.
func FuzzParseStat(f *testing.F) {
	for _, seed := range []string{
		"4711 (kube-ctrl) S 4700 4711 4700 0 -1 4194560 163 0 0 0 2 1 0 0 20 0 9 0",
		"12 (x) S 99 (y)) D 3 12 12", "1 () S 0", "7 ((() t 1\n", "12 (x", ")(", "1 (",
		"99999999999999999999 (x) S 1", "12 (\xff\x00) Z 0",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, line string) {
		st, err := parseStat(line)
		if err != nil {
			return
		}
		again := fmt.Sprintf("%d (%s) %s %d", st.pid, st.comm, string([]byte{st.state}), st.ppid)
		if st2, err := parseStat(again); err != nil || st2 != st {
			t.Errorf("parseStat(%q) = %+v, but its rewrite %q reads %+v, %v", line, st, again, st2, err)
		}
	})
}

func TestParseSchedstat(t *testing.T) {
	slices, run, err := parseSchedstat("12002929 73550856 7\n")
	if err != nil || slices != 7 || run != 12002929*time.Nanosecond {
		t.Errorf("parseSchedstat = %d, %v, %v; want 7, 12.002929ms, nil", slices, run, err)
	}
	for _, bad := range []string{"", "1 2", "1 2 3 4", "x 2 3", "1 2 -3"} {
		if _, _, err := parseSchedstat(bad); err == nil {
			t.Errorf("parseSchedstat(%q): no error", bad)
		}
	}
}

// The lines are ones this package's tests saw on amd64 Go processes.
func TestParseSyscall(t *testing.T) {
	ms := time.Millisecond
	for _, tc := range []struct {
		name, arch, text string
		want             Syscall
	}{
		{"running", "amd64", "running\n", Syscall{Running: true}},
		{"outside a call", "amd64", "-1 0x7ffc55dc0e98 0x43edae\n", Syscall{Nr: -1}},
		{"epoll_pwait, an hour", "amd64", "281 0x5 0x7ffde8669ddc 0x80 0x36ee7f 0x0 0x0 0x7ffde8669d48 0x40816e\n",
			Syscall{Nr: 281, Args: [6]uint64{5, 0x7ffde8669ddc, 0x80, 0x36ee7f, 0, 0},
				Timer: Timer{"epoll_pwait", 3599999 * ms, true}}},
		{"epoll_wait, no timeout as a 32-bit -1", "amd64", "232 0x4 0x1000 0x80 0xffffffff 0x0 0x0 0x1 0x2",
			Syscall{Nr: 232, Args: [6]uint64{4, 0x1000, 0x80, 0xffffffff, 0, 0},
				Timer: Timer{"epoll_wait", -1, true}}},
		{"epoll_wait, no timeout as a 64-bit -1", "amd64", "232 0x4 0x1000 0x80 0xffffffffffffffff 0x0 0x0 0x1 0x2",
			Syscall{Nr: 232, Args: [6]uint64{4, 0x1000, 0x80, 1<<64 - 1, 0, 0},
				Timer: Timer{"epoll_wait", -1, true}}},
		{"epoll_pwait2 with a timespec", "amd64", "441 0x4 0x1000 0x80 0x7ffd0000 0x0 0x8 0x1 0x2",
			Syscall{Nr: 441, Args: [6]uint64{4, 0x1000, 0x80, 0x7ffd0000, 0, 8},
				Timer: Timer{Call: "epoll_pwait2"}}},
		{"epoll_pwait2 with nil", "arm64", "441 0x4 0x1000 0x80 0x0 0x0 0x8 0x1 0x2",
			Syscall{Nr: 441, Args: [6]uint64{4, 0x1000, 0x80, 0, 0, 8},
				Timer: Timer{"epoll_pwait2", -1, true}}},
		{"epoll_pwait on arm64", "arm64", "22 0x4 0x1000 0x80 0x31 0x0 0x8 0x1 0x2",
			Syscall{Nr: 22, Args: [6]uint64{4, 0x1000, 0x80, 0x31, 0, 8},
				Timer: Timer{"epoll_pwait", 49 * ms, true}}},
		{"22 is pipe on amd64", "amd64", "22 0x4 0x1000 0x80 0x31 0x0 0x8 0x1 0x2",
			Syscall{Nr: 22, Args: [6]uint64{4, 0x1000, 0x80, 0x31, 0, 8}}},
		{"nanosleep", "amd64", "35 0x7ffc9d1b6e10 0x0 0x0 0x0 0x0 0x0 0x7ffc9d1b6e08 0x47f763",
			Syscall{Nr: 35, Args: [6]uint64{0x7ffc9d1b6e10, 0, 0, 0, 0, 0}, Timer: Timer{Call: "nanosleep"}}},
		{"clock_nanosleep on arm64", "arm64", "115 0x1 0x1 0xffffd0c0 0x0 0x0 0x0 0x1 0x2",
			Syscall{Nr: 115, Args: [6]uint64{1, 1, 0xffffd0c0, 0, 0, 0}, Timer: Timer{Call: "clock_nanosleep"}}},
		{"futex", "amd64", "202 0x56af40 0x80 0x0 0x3a7865147ea0 0x0 0x0 0x3a7865147e68 0x47f763",
			Syscall{Nr: 202, Args: [6]uint64{0x56af40, 0x80, 0, 0x3a7865147ea0, 0, 0}}},
		{"an unknown machine", "riscv64", "22 0x4 0x1000 0x80 0x31 0x0 0x8 0x1 0x2",
			Syscall{Nr: 22, Args: [6]uint64{4, 0x1000, 0x80, 0x31, 0, 8}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := parseSyscall(tc.text, tc.arch)
			if err != nil || got != tc.want {
				t.Errorf("parseSyscall(%q, %s) = %+v, %v; want %+v", tc.text, tc.arch, got, err, tc.want)
			}
		})
	}
}

func TestParseSyscallRejects(t *testing.T) {
	for _, bad := range []string{"", "x", "-1", "-1 0x1", "281 0x5", "281 5 0x1 0x2 0x3 0x4 0x5 0x6 0x7",
		"281 0x5 0x1 0x2 0xg 0x4 0x5 0x6 0x7", "-2 0x1 0x2 0x3 0x4 0x5 0x6 0x7 0x8"} {
		if got, err := parseSyscall(bad, "amd64"); err == nil {
			t.Errorf("parseSyscall(%q) = %+v, want an error", bad, got)
		}
	}
}

// kernelAddr writes ap as /proc/net/tcp does (net/ipv4/tcp_ipv4.c,
// net/ipv6/tcp_ipv6.c): each 32-bit word of the address loaded as the
// machine holds it and printed with %08X, then the port with %04X. It is
// a reference for parseSockAddr, written the other way around.
func kernelAddr(ap netip.AddrPort, six bool) string {
	var raw []byte
	if six {
		a := ap.Addr().As16()
		raw = a[:]
	} else {
		a := ap.Addr().As4()
		raw = a[:]
	}
	var b strings.Builder
	for w := 0; w < len(raw); w += 4 {
		fmt.Fprintf(&b, "%08X", binary.NativeEndian.Uint32(raw[w:]))
	}
	fmt.Fprintf(&b, ":%04X", ap.Port())
	return b.String()
}

func TestParseSockAddr(t *testing.T) {
	for _, tc := range []struct {
		addr string
		six  bool
		want string
	}{
		{"127.0.0.1:8080", false, "127.0.0.1:8080"},
		{"10.1.2.3:1", false, "10.1.2.3:1"},
		{"0.0.0.0:0", false, "0.0.0.0:0"},
		{"[::1]:443", true, "[::1]:443"},
		{"[fe80::1:2:3:4]:65535", true, "[fe80::1:2:3:4]:65535"},
		{"[2001:db8::ff00:42:8329]:6443", true, "[2001:db8::ff00:42:8329]:6443"},
		{"[::ffff:127.0.0.1]:6443", true, "127.0.0.1:6443"}, // an IPv6 socket's IPv4 peer
		{"[::]:0", true, "[::]:0"},
	} {
		text := kernelAddr(netip.MustParseAddrPort(tc.addr), tc.six)
		got, err := parseSockAddr(text)
		if err != nil || got.String() != tc.want {
			t.Errorf("parseSockAddr(%q) (from %s) = %v, %v; want %s", text, tc.addr, got, err, tc.want)
		}
	}
}

// TestParseSockAddrLittleEndian pins the kernel's text on amd64 and arm64,
// so that the reference above cannot agree with parseSockAddr by sharing
// a mistake.
func TestParseSockAddrLittleEndian(t *testing.T) {
	if binary.NativeEndian.Uint16([]byte{1, 0}) != 1 {
		t.Skip("a big-endian machine prints other digits")
	}
	for text, want := range map[string]string{
		"0100007F:1F90":                         "127.0.0.1:8080",
		"00000000000000000000000001000000:01BB": "[::1]:443",
		"0000000000000000FFFF00000100007F:192B": "127.0.0.1:6443",
		"B80D0120000000000000000001000000:0016": "[2001:db8::1]:22",
	} {
		got, err := parseSockAddr(text)
		if err != nil || got.String() != want {
			t.Errorf("parseSockAddr(%q) = %v, %v; want %s", text, got, err, want)
		}
	}
}

func TestParseSockAddrRejects(t *testing.T) {
	for _, bad := range []string{"", "0100007F", "0100007F:", "0100007F:10000", "0100007:1F90",
		"0100007G:1F90", "000000000000000000000000010000:01BB", "0100007F:-1"} {
		if got, err := parseSockAddr(bad); err == nil {
			t.Errorf("parseSockAddr(%q) = %v, want an error", bad, got)
		}
	}
}

// kernelTCPLine writes a line of /proc/net/tcp as the kernel does.
func kernelTCPLine(s Sock, six bool) string {
	return fmt.Sprintf("%4d: %s %s %02X %08X:%08X 00:00000000 00000000  1000        0 %d 1 0000000000000000 20 4 30 10 -1",
		0, kernelAddr(s.Local, six), kernelAddr(s.Remote, six), uint8(s.State), s.TxQueue, s.RxQueue, s.Inode)
}

func TestParseTCPLine(t *testing.T) {
	want := Sock{Local: netip.MustParseAddrPort("127.0.0.1:41234"), Remote: netip.MustParseAddrPort("127.0.0.1:6443"),
		State: Established, TxQueue: 3, RxQueue: 1000, Inode: 4711}
	for _, six := range []bool{false, true} {
		line := kernelTCPLine(want, six)
		got, err := parseTCPLine(line)
		if err != nil || got != want {
			t.Errorf("parseTCPLine(%q) = %+v, %v; want %+v", line, got, err, want)
		}
	}
	for _, bad := range []string{"", "0: 0100007F:1F90 0100007F:A2C4 01 00000000:000003E8",
		"0: 0100007F:1F90 0100007F:A2C4 01 00000000 00:00000000 00000000 0 0 4711",
		"0: 0100007F:1F90 0100007F:A2C4 01 00000000:000003E8 00:00000000 00000000 0 0 x"} {
		if got, err := parseTCPLine(bad); err == nil {
			t.Errorf("parseTCPLine(%q) = %+v, want an error", bad, got)
		}
	}
}

func TestTCPStateString(t *testing.T) {
	for s, want := range map[TCPState]string{Established: "ESTABLISHED", Listen: "LISTEN",
		TimeWait: "TIME_WAIT", NewSynRecv: "NEW_SYN_RECV", 0: "TCPState(0)", 13: "TCPState(13)"} {
		if got := s.String(); got != want {
			t.Errorf("TCPState(%d).String() = %q, want %q", uint8(s), got, want)
		}
	}
}
