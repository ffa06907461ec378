//go:build !linux

package procstate

import (
	"errors"
	"net/netip"
	"testing"
)

func TestUnsupported(t *testing.T) {
	_, err1 := Tree(1)
	_, _, err2 := Socket(netip.AddrPort{}, netip.AddrPort{})
	_, err3 := Owners(nil)
	_, err4 := Look(nil)
	for i, err := range []error{err1, err2, err3, err4} {
		if !errors.Is(err, errors.ErrUnsupported) {
			t.Errorf("call %d: %v, want errors.ErrUnsupported", i+1, err)
		}
	}
}
