package watchcache_test

import (
	"context"
	"fmt"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// The history ring halves too: after a quiet spell, a ring that grew in a
// burst gives back its older half at one write (C4).
func Example_historyHalves() {
	ctx := context.Background()
	s := newServer(ctx)
	defer s.Close()
	s.create(ctx, "ns0/a") // 2
	for i := range 150 {
		s.create(ctx, fmt.Sprintf("ns1/obj-%04d", i+1)) // 3 to 152: the ring doubles to 200
	}
	caughtUp(ctx, s, s.api, false)
	s.clock.Step(80 * time.Second)
	for i := range 49 {
		s.create(ctx, fmt.Sprintf("ns2/obj-%04d", i+1)) // 153 to 201: the ring is full
	}
	caughtUp(ctx, s, s.api, false)
	watchAt := func(when, rv string) {
		w, _ := s.watch(ctx, s.api, metav1.ListOptions{ResourceVersion: rv})
		fmt.Printf("%s, WATCH rv=%s: %s\n", when, rv, next(w))
		w.Stop()
	}
	watchAt("full ring", "2")

	s.create(ctx, "ns2/obj-0050") // 202: rv 152, a quarter back, is 80 s older
	caughtUp(ctx, s, s.api, false)
	watchAt("one more", "2")
	watchAt("one more", "102")
	// Output:
	// full ring, WATCH rv=2: ADDED ns1/obj-0001@3
	// one more, WATCH rv=2: ERROR 410 Expired: too old resource version: 2 (102)
	// one more, WATCH rv=102: ADDED ns1/obj-0101@103
}
