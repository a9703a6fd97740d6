package main

import (
	"os"

	"golang.org/x/sys/windows"
)

// termColumns returns the width of the console window f, or 0 when f is
// none.
func termColumns(f *os.File) int {
	var info windows.ConsoleScreenBufferInfo
	if err := windows.GetConsoleScreenBufferInfo(windows.Handle(f.Fd()), &info); err != nil {
		return 0
	}
	return int(info.Window.Right-info.Window.Left) + 1
}
