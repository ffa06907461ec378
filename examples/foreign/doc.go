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
//
// The second is controller-runtime's own example multiclustersync
// (sigs.k8s.io/controller-runtime/examples/multiclustersync, of the
// controller-runtime this module requires): a Manager that copies every
// secret of one namespace into another. Its manager's metrics server
// binds :8080 on every interface, so its test runs again in a network
// namespace of its own (netns_linux_test.go), world and controller
// both, where nothing else can take that port or reach it. What explore
// finds in it is in multiclustersync_test.go.
package foreign
