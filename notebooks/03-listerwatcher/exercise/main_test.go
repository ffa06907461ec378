package exercise

import (
	"testing"

	"go.uber.org/goleak"
)

// Every check starts and stops etcds: none may leave a goroutine behind,
// in the maintainers' tests or in the lab (go test -tags lab).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
