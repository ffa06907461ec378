package listerwatcher_test

import (
	"testing"

	"go.uber.org/goleak"
)

// Every cell starts and stops an etcd and its watches: none may leave a
// goroutine behind.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
