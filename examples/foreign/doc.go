// Package foreign explores controllers this project did not write, run
// unchanged through the outside path (controllertest's Command, what
// cachelab explore --serve does): their binaries are built in the test
// from the module proxy's source, and their manifests read from there,
// nothing of them copied into the repository.
//
// The first is kubernetes/sample-controller (k8s.io/sample-controller
// v0.37.1, a tool of this module's go.mod: v0.37.2 is not on the
// proxy): a Foo (samplecontroller.k8s.io/v1alpha1, with the status
// subresource) owns a Deployment named by its spec.deploymentName. What
// explore finds in it is in samplecontroller_test.go.
package foreign
