package watchcache_test

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/cachelab/cachelab/internal/difftest"
)

// Every cell starts and stops an etcd, a watch cache and its watches:
// none may leave a goroutine behind. (The cacher logs through klog: keep
// it off stderr.)
func TestMain(m *testing.M) {
	difftest.Quiet()
	goleak.VerifyTestMain(m)
}
