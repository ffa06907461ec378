// Package solution is the reference solution of chapter 1's lab.
package solution

import (
	"fmt"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/client-go/tools/cache"
)

// KeyFunc is the exercise's key function, done.
func KeyFunc(obj any) (string, error) {
	if key, ok := obj.(cache.ExplicitKey); ok {
		return string(key), nil
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		return "", fmt.Errorf("object has no meta: %v", err)
	}
	if m.GetNamespace() == "" {
		return m.GetName(), nil
	}
	return m.GetNamespace() + "/" + m.GetName(), nil
}

// AppIndex is the exercise's index function, done.
func AppIndex(obj any) ([]string, error) {
	m, err := meta.Accessor(obj)
	if err != nil {
		return nil, err
	}
	if app, ok := m.GetLabels()["app"]; ok {
		return []string{app}, nil
	}
	return nil, nil
}
