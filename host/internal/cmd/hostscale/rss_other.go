//go:build !linux

package main

// selfMaxRSS and childrenRSS are measured on Linux only.
func selfMaxRSS() uint64  { return 0 }
func childrenRSS() uint64 { return 0 }
