package wire_test

import (
	"context"
	"fmt"
	"testing"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"

	"github.com/cachelab/cachelab/internal/apiworld"
)

// Side by side with client-go's dynamic client, on one in-process
// kube-apiserver behind its watch cache: compare with
//
//	go test ./wire -run XXX -bench . -count 6 > wire.txt
//	go run golang.org/x/perf/cmd/benchstat@latest -col /impl wire.txt
//
// BenchmarkWireList: one op is a LIST of n pods at rv 0 (the cache's),
// requested, received and decoded into an UnstructuredList.
// BenchmarkWireWatchList: one op is a watch-list of n pods, read up to
// its initial-events bookmark, decoded event by event.
func BenchmarkWireList(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		p := benchPair(b, n)
		for _, side := range []struct {
			impl string
			lw   lister
		}{{"cachelab", p.ours}, {"client-go", p.their}} {
			b.Run(fmt.Sprintf("n=%d/impl=%s", n, side.impl), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					if _, err := side.lw.ListWithContext(context.Background(), metav1.ListOptions{ResourceVersion: "0"}); err != nil {
						b.Fatal(err)
					}
				}
			})
		}
	}
}

func BenchmarkWireWatchList(b *testing.B) {
	for _, n := range []int{1_000, 10_000} {
		p := benchPair(b, n)
		opts := metav1.ListOptions{SendInitialEvents: ptr(true), AllowWatchBookmarks: true,
			ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, TimeoutSeconds: ptr(int64(300))}
		for _, side := range []struct {
			impl string
			lw   lister
		}{{"cachelab", p.ours}, {"client-go", p.their}} {
			b.Run(fmt.Sprintf("n=%d/impl=%s", n, side.impl), func(b *testing.B) {
				b.ReportAllocs()
				for b.Loop() {
					w, err := side.lw.WatchWithContext(context.Background(), opts)
					if err != nil {
						b.Fatal(err)
					}
					for e := range w.ResultChan() {
						if e.Type == watch.Bookmark {
							break
						}
					}
					w.Stop()
				}
			})
		}
	}
}

// benchPair is a world with n pods and both clients on it; the clients
// never rate-limit a benchmark's thousands of requests.
func benchPair(b *testing.B, n int) pair {
	b.Helper()
	wd := apiworld.Start(b, true)
	wd.CreateN(b, n)
	wd.Settle(b)
	return newPairWith(b, wd.Server, "", -1)
}
