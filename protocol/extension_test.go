package protocol_test

import (
	"testing"

	"github.com/conduitmcp/conduit/protocol"
)

func TestCheckExtensionID(t *testing.T) {
	for id, ok := range map[string]bool{
		"io.modelcontextprotocol/tasks": true,
		"com.example/feature":           true,
		"com.example/":                  true,
		"com.example-1/f_2.x":           true,
		"x/a":                           true,
		"feature":                       false, // no prefix
		"/feature":                      false,
		"com..example/f":                false,
		"1com.example/f":                false,
		"com.example-/f":                false,
		"com.example/-f":                false,
		"com.example/f-":                false,
		"com.example/f g":               false,
		"com.example/f/g":               false,
	} {
		if err := protocol.CheckExtensionID(id); (err == nil) != ok {
			t.Errorf("CheckExtensionID(%q) = %v, want ok %v", id, err, ok)
		}
	}
}
