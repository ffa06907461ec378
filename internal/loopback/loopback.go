// Package loopback gives tests the two kinds of broken endpoint that an
// etcd client meets most: a port nothing listens on, and one that accepts
// connections and never answers. Both are on 127.0.0.1, on ports the
// kernel hands out.
package loopback

import "net"

// T is what the helpers need of a test: testing.TB, or a testscript
// script wrapped to look like one.
type T interface {
	Helper()
	Fatal(args ...any)
	Cleanup(func())
}

// Refused is a loopback address nothing listens on: a port the kernel
// handed out, closed at once, so that a dial is refused.
func Refused(t T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// Mute is a loopback address that accepts connections and never answers,
// until the test ends: an etcd that hangs. dialed is closed at its first
// connection.
func Mute(t T) (addr string, dialed <-chan struct{}) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done, first := make(chan struct{}), make(chan struct{})
	var conns []net.Conn
	go func() {
		defer close(done)
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			if conns = append(conns, c); len(conns) == 1 {
				close(first)
			}
		}
	}()
	t.Cleanup(func() {
		_ = l.Close()
		<-done
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return l.Addr().String(), first
}
