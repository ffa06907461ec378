// Package skeleton is pager.go as a learner gets it, its comments aside:
// TestSkeletonFails runs the lab on it, so that CI proves the skeleton
// fails whatever the learner's pager.go holds, and notebooks/internal/lab
// checks that it is still pager.go's code.
package skeleton

import (
	"context"
	"errors"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
)

// ListFunc is pager.go's: one LIST call.
type ListFunc func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error)

// ListAll is pager.go's, unwritten: it returns an error.
func ListAll(ctx context.Context, list ListFunc, pageSize int64) (items []string, resourceVersion string, err error) {
	return nil, "", errors.New("ListAll is not written yet")
}
