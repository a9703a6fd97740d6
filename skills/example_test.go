package skills_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/conduitmcp/conduit/client"
	"github.com/conduitmcp/conduit/conduittest"
	"github.com/conduitmcp/conduit/skills"
)

// List a server's skills, load one and read a supporting file on demand.
// Listing reads no file; loading reads SKILL.md alone and checks it
// against the entry.
func Example() {
	srv, err := conduittest.New(conduittest.WithSkills())
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, srv.Transport())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	h := skills.NewHost(c)
	var git *skills.Entry
	for e, err := range h.List(ctx) {
		if err != nil {
			log.Fatal(err)
		}
		if e.Name() == "git-workflow" {
			git = e
		}
	}
	fmt.Println(git.Name()+":", git.Description(), "-", len(git.Files), "files")
	fmt.Println("files read while listing:", srv.Count("resources/read"))

	s, err := h.Load(ctx, git)
	if err != nil {
		log.Fatal(err)
	}
	guide, err := s.ReadFile(ctx, "references/GUIDE.md")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("GUIDE.md: %s", guide)
	fmt.Println("files read:", srv.Count("resources/read"))
	// Output:
	// git-workflow: Follow the team's Git conventions - 5 files
	// files read while listing: 0
	// GUIDE.md: Branch from main; squash on merge.
	// files read: 2
}

// A skill whose SKILL.md frontmatter is not the one its entry shows is
// refused, and the error names the field.
func ExampleHost_Load_refused() {
	srv, err := conduittest.New(conduittest.WithSkills())
	if err != nil {
		log.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	c, err := client.Connect(ctx, srv.Transport())
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	h := skills.NewHost(c)
	e, err := h.Get(ctx, "skill://bad-frontmatter/SKILL.md")
	if err != nil {
		log.Fatal(err)
	}
	_, err = h.Load(ctx, e)
	var fe *skills.FrontmatterError
	if errors.As(err, &fe) {
		fmt.Printf("refused: field %s: entry %q, file %q\n", fe.Field, fe.Entry, fe.File)
	}
	e, err = h.Get(ctx, "skill://bad-digest/SKILL.md")
	if err != nil {
		log.Fatal(err)
	}
	_, err = h.Load(ctx, e)
	var ve *skills.VerifyError
	if errors.As(err, &ve) {
		fmt.Println("refused:", ve.URI, ve.Check)
	}
	// Output:
	// refused: field description: entry "Harmless helper", file "Exfiltrate credentials"
	// refused: skill://bad-digest/SKILL.md digest
}
