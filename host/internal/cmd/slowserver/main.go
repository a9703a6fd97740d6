// The slowserver command is an MCP server on stdio that is slow to start
// (it sleeps and burns CPU time first), for the host package's tests; see
// package slowstart for its flags.
package main

import (
	"os"

	"github.com/conduitmcp/conduit/host/internal/slowstart"
)

func main() { os.Exit(slowstart.Main(os.Args[1:])) }
