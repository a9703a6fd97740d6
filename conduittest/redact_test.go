package conduittest_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/conduittest"
)

// TestRecorderRedactsCredentials: a transcript recorded with the default
// Recorder holds no credential a host put in _meta (Authorization, an API
// key) nor an authorization header value in the arguments or the result
// (the echo tool returns it), in both eras; the rest of the session is
// recorded as it was, and a Replay of it still answers the same calls.
// KeepCredentials records them.
func TestRecorderRedactsCredentials(t *testing.T) {
	const secret = "s3cr3t-t0ken"
	for _, era := range []client.Protocol{client.Modern, client.Legacy} {
		for _, keep := range []bool{false, true} {
			name := string(era) + "/redacted"
			if keep {
				name = string(era) + "/kept"
			}
			t.Run(name, func(t *testing.T) {
				var buf bytes.Buffer
				var opts []conduittest.RecorderOption
				if keep {
					opts = append(opts, conduittest.KeepCredentials())
				}
				rec := conduittest.NewRecorder(&buf, opts...)
				srv := conduittest.NewServer(t)
				c, err := client.Connect(testCtx(t), srv.Transport(), client.WithProtocol(era), rec.Option())
				if err != nil {
					t.Fatal(err)
				}
				call := func(c *client.Client) string {
					res, err := c.CallTool(testCtx(t), "echo", map[string]any{"text": "Bearer " + secret},
						client.WithCallMeta(map[string]any{"Authorization": "Bearer " + secret, "x-api-key": secret, "note": "kept"}))
					if err != nil {
						t.Fatal(err)
					}
					return res.Text()
				}
				if got := call(c); got != "Bearer "+secret {
					t.Fatalf("echo = %q", got)
				}
				c.Close()
				if err := rec.Flush(); err != nil {
					t.Fatal(err)
				}
				text := buf.String()
				if strings.Contains(text, secret) != keep {
					t.Errorf("transcript holds the secret: %v, want %v:\n%s", strings.Contains(text, secret), keep, text)
				}
				if !strings.Contains(text, `"note":"kept"`) || !strings.Contains(text, `"method":"tools/call"`) {
					t.Errorf("transcript lost what is not a credential:\n%s", text)
				}
				if !keep && strings.Count(text, conduittest.Redacted) < 4 {
					t.Errorf("transcript redacts %d values, want the two _meta entries, the argument and the result:\n%s", strings.Count(text, conduittest.Redacted), text)
				}
				entries, err := conduittest.ReadTranscript(&buf)
				if err != nil {
					t.Fatal(err)
				}
				rp := conduittest.NewReplay(t, entries)
				rc, err := client.Connect(testCtx(t), rp.Transport(), client.WithProtocol(era))
				if err != nil {
					t.Fatal(err)
				}
				defer rc.Close()
				want := "Bearer " + secret
				if !keep {
					want = conduittest.Redacted
				}
				if got := call(rc); got != want {
					t.Errorf("replayed echo = %q, want %q", got, want)
				}
			})
		}
	}
}

// TestRecorderRedactsEscapedCredentials: a server that writes a
// credential's name or scheme with JSON escapes ("access\u005ftoken",
// "\u0042earer …") has it redacted all the same.
func TestRecorderRedactsEscapedCredentials(t *testing.T) {
	const secret = "s3cr3t-t0ken"
	for _, result := range []string{
		`{"content":[],"access\u005ftoken":"` + secret + `"}`,
		`{"content":[{"type":"text","text":"\u0042earer ` + secret + `"}]}`,
		`{"content":[],"_meta":{"\u0041uthorization":"` + secret + `"}}`,
	} {
		var buf bytes.Buffer
		rec := conduittest.NewRecorder(&buf)
		srv := conduittest.NewServer(t, conduittest.WithFaults(conduittest.FaultResult.On("tools/call").With("result", result)))
		c, err := client.Connect(testCtx(t), srv.Transport(), rec.Option())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.CallTool(testCtx(t), "echo", map[string]any{"text": "x"}); err != nil {
			t.Fatal(err)
		}
		c.Close()
		if err := rec.Flush(); err != nil {
			t.Fatal(err)
		}
		if text := buf.String(); strings.Contains(text, secret) || !strings.Contains(text, conduittest.Redacted) {
			t.Errorf("result %s: transcript holds the secret:\n%s", result, text)
		}
	}
}
