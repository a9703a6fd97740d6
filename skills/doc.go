// Package skills is the host side of the MCP skills extension (SEP-2640,
// extension io.modelcontextprotocol/skills) on a [client.Client]: a
// server publishes Agent Skills (directories of files, minimally a
// SKILL.md with YAML frontmatter) as resources, lists them with
// skills/list, describes one with skills/get and, where it declares
// directoryRead, lists a directory with resources/directory/read.
//
// A [Host] wraps a connection. [Host.List] and [Host.Get] return
// [Entry] values: a skill's SKILL.md URI, its frontmatter and the complete
// list of its files with their SHA-256 digests and sizes. [Host.Load]
// loads a skill from its entry ([Host.LoadURI] from its URI alone), and
// [Skill.ReadFile] reads its other files on demand.
//
// What the extension asks of a host, this package does:
//
//   - Nothing is read ahead of need. Listing and getting read no file;
//     Load reads SKILL.md only; a supporting file is read when
//     [Skill.ReadFile] asks for it, and then kept.
//   - Every file read is checked against the held entry: a file the entry
//     does not list is not read, and content whose size or digest is not
//     the entry's is never returned ([VerifyError]).
//   - SKILL.md's frontmatter is parsed as YAML and compared field by field
//     with the entry's; on any difference the skill is not loaded
//     ([FrontmatterError]).
//   - resources/directory/read is sent only to a server that declared
//     directoryRead; [Skill.ReadDir] separates the children the held entry
//     lists from those it does not (the skill changed: refresh the entry
//     with [Host.Get] and load it again).
//
// The client needs no option for the extension: servers declare it, and
// clients do not.
//
// A host's other duties (user approval, tagging content with its origin,
// ignoring allowed-tools, per-origin names) are the application's; an
// [Entry] carries what they need.
//
// # Concurrency
//
// A [Host] and a [Skill] are safe for concurrent use.
//
// # Errors
//
// Requests fail as [client.Client.Call] and [client.Client.ReadResource]
// fail; a method the server's declaration does not cover fails with a
// [*client.Error] matching [client.ErrNotSupported] before anything is
// sent. Content that fails a check is a [*VerifyError] or a
// [*FrontmatterError]; an entry no host may load is an [*EntryError];
// a dynamic skill is [ErrDynamic].
package skills
