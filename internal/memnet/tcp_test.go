package memnet

import (
	"errors"
	"io"
	"net"
	"runtime"
	"syscall"
	"testing"
)

// TestServeTCP relays a TCP client to the network's server, resets it
// when its line is cut, and holds its next connection until Restore.
func TestServeTCP(t *testing.T) {
	n := New(addr, nil)
	defer n.Close()
	go func() { // an echo server
		for {
			c, err := n.Listener().Accept()
			if err != nil {
				return
			}
			go func() { io.Copy(c, c); c.Close() }()
		}
	}()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	n.ServeTCP(ln, "outside")
	dial := func() net.Conn {
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	echo := func(c net.Conn, s string) error {
		if _, err := io.WriteString(c, s); err != nil {
			return err
		}
		buf := make([]byte, len(s))
		if _, err := io.ReadFull(c, buf); err != nil {
			return err
		}
		if string(buf) != s {
			t.Fatalf("echo of %q came back as %q", s, buf)
		}
		return nil
	}
	c := dial()
	defer c.Close()
	if err := echo(c, "hello"); err != nil {
		t.Fatal(err)
	}
	rs := n.Relays()
	if len(rs) != 1 || rs[0].Held || rs[0].Client.String() != c.LocalAddr().String() || rs[0].Server.String() != ln.Addr().String() {
		t.Fatalf("Relays = %+v, want one, not held, from %v to %v", rs, c.LocalAddr(), ln.Addr())
	}
	if p := n.Pending(); p != 0 {
		t.Errorf("Pending after the echo was read = %d, want 0", p)
	}

	n.Cut("outside")
	if _, err := c.Read(make([]byte, 1)); !errors.Is(err, syscall.ECONNRESET) {
		t.Errorf("a read after the cut got %v, want ECONNRESET", err)
	}
	held := dial()
	defer held.Close()
	if _, err := io.WriteString(held, "again"); err != nil {
		t.Fatal(err)
	}
	for !heldOne(n) { // the relay takes the connection, then holds it
		runtime.Gosched()
	}
	n.Restore("outside")
	buf := make([]byte, 5)
	if _, err := io.ReadFull(held, buf); err != nil || string(buf) != "again" {
		t.Fatalf("the held connection read %q, %v after Restore; want its echo", buf, err)
	}
}

func heldOne(n *Network) bool {
	for _, r := range n.Relays() {
		if r.Held {
			return true
		}
	}
	return false
}
