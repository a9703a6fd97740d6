// Package testenv locates the pieces the interop tests need: the interop
// module root, the pinned Node 22 binary and the npm packages installed by
// `npm ci`, and builds Go programs of this module into a temp dir.
package testenv
