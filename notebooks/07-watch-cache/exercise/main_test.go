package exercise

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/cachelab/cachelab/internal/difftest"
)

// Every story starts and stops an etcd and a watch cache: none may leave
// a goroutine behind, in the maintainers' tests or in the lab (go test
// -tags lab). The cacher logs through klog ("unexpected ListAndWatch
// error: context canceled" as a story's cache stops): keep it off
// stderr, where it would print above the learner's sheet.
func TestMain(m *testing.M) {
	difftest.Quiet()
	goleak.VerifyTestMain(m)
}
