package foreign

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"strings"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/cachelab/cachelab/internal/testdeadline"
)

// netnsEnv marks the process inNetwork starts: its value is the test it
// runs there.
const netnsEnv = "CACHELAB_NETNS_TEST"

// inNetwork runs the test t again in a process of its own, in a network
// namespace of its own, with env added to its environment, and returns
// false: t's caller returns at once, and the process's verdict is t's.
// In that process it brings loopback up and returns true: the test goes
// on there.
//
// A controller that binds fixed ports on every interface
// (controller-runtime's metrics server takes :8080 unless told
// otherwise) binds them in that namespace, where nothing else runs and
// nothing outside can reach them; the world it talks to, on loopback,
// is in the process beside it. Without root the namespace is made inside
// a user namespace of its own, where the kernel allows that; where it
// does not, the test is skipped.
func inNetwork(t *testing.T, env ...string) bool {
	t.Helper()
	if os.Getenv(netnsEnv) == t.Name() {
		if err := loopbackUp(); err != nil {
			t.Fatalf("bringing loopback up in the test's network namespace: %v", err)
		}
		return true
	}
	ctx := testdeadline.Context(t)
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^"+regexp.QuoteMeta(t.Name())+"$", "-test.count=1", "-test.v")
	cmd.Env = append(append(os.Environ(), netnsEnv+"="+t.Name()), env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Cloneflags: syscall.CLONE_NEWNET}
	if uid, gid := os.Getuid(), os.Getgid(); uid != 0 {
		cmd.SysProcAttr.Cloneflags |= syscall.CLONE_NEWUSER
		cmd.SysProcAttr.UidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: uid, Size: 1}}
		cmd.SysProcAttr.GidMappings = []syscall.SysProcIDMap{{ContainerID: 0, HostID: gid, Size: 1}}
	}
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	switch {
	case err == nil:
		if testing.Verbose() {
			t.Logf("in a network namespace of its own:\n%s", out)
		}
	case errors.As(err, &exit):
		t.Errorf("in a network namespace of its own: %v\n%s", err, out)
	case errors.Is(err, syscall.EPERM) || errors.Is(err, syscall.EINVAL) || errors.Is(err, syscall.ENOSPC):
		t.Skipf("no network namespace for the controller: %v (run as root, or let users make user namespaces: sysctl kernel.unprivileged_userns_clone=1 or kernel.apparmor_restrict_unprivileged_userns=0)", err)
	default:
		t.Fatalf("starting the test in a network namespace of its own: %v", err)
	}
	if s := string(out); err == nil && strings.Contains(s, "--- SKIP: "+t.Name()) {
		t.Skipf("skipped in its network namespace:\n%s", s)
	}
	return false
}

// loopbackUp brings up lo, which a new network namespace has down.
func loopbackUp() error {
	fd, err := unix.Socket(unix.AF_INET, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return err
	}
	defer unix.Close(fd)
	ifr, err := unix.NewIfreq("lo")
	if err != nil {
		return err
	}
	if err := unix.IoctlIfreq(fd, unix.SIOCGIFFLAGS, ifr); err != nil {
		return fmt.Errorf("SIOCGIFFLAGS: %w", err)
	}
	ifr.SetUint16(ifr.Uint16() | unix.IFF_UP)
	if err := unix.IoctlIfreq(fd, unix.SIOCSIFFLAGS, ifr); err != nil {
		return fmt.Errorf("SIOCSIFFLAGS: %w", err)
	}
	return nil
}

// ownNetwork says whether the process's network has no interface but
// loopback, as a network namespace of its own made for it has: a port
// bound on every interface there is reachable from nowhere else.
func ownNetwork() bool {
	ifs, err := net.Interfaces()
	if err != nil {
		return false
	}
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback == 0 {
			return false
		}
	}
	return true
}
