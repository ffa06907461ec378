package exercise

import (
	"testing"

	"go.uber.org/goleak"
)

// Every story starts and stops an etcd and a watch cache: none may leave
// a goroutine behind, in the maintainers' tests or in the lab (go test
// -tags lab).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
