package suggest_test

import (
	"fmt"

	"github.com/cachelab/cachelab/internal/suggest"
)

// A mistyped scenario command, and the commands a scenario file can say.
func ExampleClosest() {
	commands := []string{"create", "delete", "release", "release-cache", "restart-etcd", "update"}
	fmt.Println(suggest.Closest("creat", commands, 3))
	fmt.Println(suggest.Closest("releas", commands, 3))
	fmt.Println(suggest.Closest("frobnicate", commands, 3))
	// Output:
	// [create]
	// [release release-cache]
	// []
}
