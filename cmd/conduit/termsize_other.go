//go:build !unix && !windows

package main

import "os"

// termColumns returns 0: the width of a terminal is not known here.
func termColumns(*os.File) int { return 0 }
