package main

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/conduitmcp/conduit/skills"
)

// skillsFlow drives the SEP-2640 client scenarios as a host does: it
// lists the server's skills (reading no file) and, when load is set,
// loads the first listed skill and then reads each of its files. Loading
// reads SKILL.md and verifies it (size, digest, frontmatter against the
// entry); a skill that fails is refused, so none of its other files is
// read. A refusal is the expected outcome of the verify scenarios and
// ends the flow successfully; any other failure is an error.
func skillsFlow(load bool) flow {
	return func(ctx context.Context, env scenarioEnv) error {
		c, err := env.dial(ctx)
		if err != nil {
			return err
		}
		defer c.Close()
		h := skills.NewHost(c)
		var entries []*skills.Entry
		for e, err := range h.List(ctx) {
			if err != nil {
				return fmt.Errorf("skills/list: %w", err)
			}
			entries = append(entries, e)
		}
		fmt.Fprintf(os.Stderr, "listed %d skills\n", len(entries))
		if !load || len(entries) == 0 {
			return nil
		}
		s, err := h.Load(ctx, entries[0])
		var ve *skills.VerifyError
		var fe *skills.FrontmatterError
		switch {
		case errors.As(err, &ve), errors.As(err, &fe):
			fmt.Fprintf(os.Stderr, "refused %s: %v\n", entries[0].URI, err)
			return nil
		case err != nil:
			return fmt.Errorf("loading %s: %w", entries[0].URI, err)
		}
		for _, f := range s.Entry().Files {
			b, err := s.ReadFile(ctx, f.URI)
			if err != nil {
				return fmt.Errorf("reading %s: %w", f.URI, err)
			}
			fmt.Fprintf(os.Stderr, "read %s (%d bytes, verified)\n", f.URI, len(b))
		}
		return nil
	}
}
