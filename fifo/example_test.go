package fifo_test

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/cachelab/cachelab/fifo"
)

func pod(name, rv string) *metav1.PartialObjectMetadata {
	return &metav1.PartialObjectMetadata{ObjectMeta: metav1.ObjectMeta{Namespace: "shop", Name: name, ResourceVersion: rv}}
}

// A FIFO keeps one object per key, the newest, at the key's first place.
// The delete of db is never seen by the consumer.
func Example() {
	q := fifo.New(fifo.Options{})
	_ = q.Add(pod("web", "1"))
	_ = q.Add(pod("db", "2"))
	_ = q.Update(pod("web", "3"))
	_ = q.Delete(pod("db", "4"))
	_ = q.Add(pod("cache", "5"))
	q.Close()
	for {
		_, err := q.Pop(func(obj any, _ bool) error {
			m := obj.(metav1.Object)
			fmt.Printf("%s@%s\n", m.GetName(), m.GetResourceVersion())
			return nil
		})
		if err != nil {
			fmt.Println(err)
			return
		}
	}
	// Output:
	// web@3
	// cache@5
	// DeltaFIFO: manipulating with closed queue
}
