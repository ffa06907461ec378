package synctrack_test

import (
	"fmt"

	"github.com/cachelab/cachelab/synctrack"
)

// A count worked out only when asked for, and again only after a change:
// three questions, two changes, two evaluations.
func ExampleLazy() {
	pods := []string{"web", "db"}
	var running synctrack.Lazy[int]
	running.Evaluate = func() (int, error) {
		fmt.Println("  (counting)")
		return len(pods), nil
	}

	n, _ := running.Get()
	fmt.Println("running:", n)
	n, _ = running.Get()
	fmt.Println("running:", n)

	pods = append(pods, "api")
	running.Notify()
	pods = append(pods, "cron")
	running.Notify()
	n, _ = running.Get()
	fmt.Println("running:", n)
	// Output:
	//   (counting)
	// running: 2
	// running: 2
	//   (counting)
	// running: 4
}
