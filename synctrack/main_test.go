package synctrack_test

import (
	"testing"

	"go.uber.org/goleak"
)

// The stories start goroutines that block inside Evaluate: none may be
// left behind.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
