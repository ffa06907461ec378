// Package skeleton holds story.txt as a learner gets it: TestSkeletonFails
// runs the lab on this copy, so that CI proves the skeleton fails
// whatever the learner's story.txt holds, and notebooks/internal/lab
// checks that it is still story.txt, byte for byte.
package skeleton
