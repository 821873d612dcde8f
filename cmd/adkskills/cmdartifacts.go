package main

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"strings"
	"text/tabwriter"

	"google.golang.org/adk/artifact"

	"github.com/adkskills/adkskills/fileartifact"
	"github.com/adkskills/adkskills/internal/adkglue"
	"github.com/adkskills/adkskills/tools/runscript"
)

const artifactsAbout = `Lists the artifacts of a session of the store (ls, the default): the file
each one holds (its path as the script wrote it; - for a file no script
wrote, such as an upload), the artifact's name, number of versions, latest
version, its size and MIME type. ls shows the session's current tree: a file
a run deleted, renamed or moved away is left out (--deleted lists those
instead; cat still prints them). cat prints the
raw bytes of an artifact's latest version, or of --version N. NAME is the
artifact name (dist∕report.zip) or the script's file path (dist/report.zip).
--app, --user and --session pick the session, so an agent's own store
(fileartifact.New) can be browsed with the names its runner uses.`

func artifactsCommand(ctx context.Context, c *cli, args []string) int {
	fs := newFlagSet("artifacts", "adkskills artifacts [ls] [flags]\n       adkskills artifacts cat NAME [--version N] [flags]", artifactsAbout)
	var st storeFlags
	st.register(fs)
	app := fs.String("app", appName, "the ADK app `NAME` (runner.Config.AppName) whose artifacts to browse")
	user := fs.String("user", "", "the `USER` ID whose artifacts to browse (default the OS user, as run and chat save)")
	version := fs.Int64("version", 0, "cat: the `N`th version (default the latest)")
	deleted := fs.Bool("deleted", false, "ls: list the files runs deleted from the session's tree instead")
	pos, _, code, done := c.parse(fs, args)
	if done {
		return code
	}
	sub := "ls"
	if len(pos) > 0 {
		sub, pos = pos[0], pos[1:]
	}
	switch sub {
	case "ls":
		if len(pos) > 0 {
			return c.usageError(fs, "artifacts ls: unexpected argument %q", pos[0])
		}
		if *version != 0 {
			return c.usageError(fs, "artifacts ls: --version is for cat")
		}
	case "cat":
		if *deleted {
			return c.usageError(fs, "artifacts cat: --deleted is for ls")
		}
		if len(pos) != 1 {
			return c.usageError(fs, "artifacts cat needs exactly one NAME")
		}
		if *version < 0 {
			return c.usageError(fs, "artifacts cat: --version must be positive, got %d", *version)
		}
	default:
		return c.usageError(fs, "artifacts: unknown subcommand %q (ls or cat)", sub)
	}
	if *app == "" {
		return c.usageError(fs, "artifacts: --app must not be empty")
	}
	store, dir, err := c.openStore(st.dir)
	if err != nil {
		c.errorf("%v", err)
		return exitFailure
	}
	sc := scope{app: *app, user: cmp.Or(*user, c.userID()), session: st.session}
	if sub == "ls" {
		return c.artifactsLs(ctx, store, dir, sc, *deleted)
	}
	return c.artifactsCat(ctx, store, sc, pos[0], *version)
}

// scope is the app, user and session whose artifacts a command reads.
type scope struct {
	app, user, session string
}

// artifactsLs lists the artifacts of the session's tree, or with deleted
// those of the files runs deleted from it.
func (c *cli) artifactsLs(ctx context.Context, store *fileartifact.Service, dir string, sc scope, deleted bool) int {
	app, userID, sessionID := sc.app, sc.user, sc.session
	list, err := store.List(ctx, &artifact.ListRequest{AppName: app, UserID: userID, SessionID: sessionID})
	if err != nil {
		c.errorf("listing artifacts: %v", err)
		return exitFailure
	}
	gone, err := runscript.DeletedFiles(ctx, adkglue.SessionArtifacts(store, app, userID, sessionID))
	if err != nil {
		c.errorf("reading the session's deleted files: %v", err)
		return exitFailure
	}
	goneAt := map[string]bool{}
	for _, f := range gone {
		goneAt[f.Path] = true
	}
	var names []string
	hidden := 0
	for _, name := range list.FileNames {
		if name == runscript.DeletedArtifact {
			continue
		}
		p, ok := runscript.ArtifactPath(name)
		if !ok {
			p = name
		}
		if goneAt[p] != deleted {
			hidden++
			continue
		}
		names = append(names, name)
	}
	slices.Sort(names)
	if len(names) == 0 {
		what := "artifacts"
		if deleted {
			what = "deleted files"
		}
		fmt.Fprintf(c.stderr, "adkskills: no %s in session %q of user %q, app %q, in %s\n", what, sessionID, userID, app, dir)
		c.hiddenNote(hidden, deleted)
		return exitOK
	}
	tw := tabwriter.NewWriter(c.stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "FILE\tARTIFACT\tVERSIONS\tLATEST\tSIZE\tMIME")
	for _, name := range names {
		// The file's path, not the escaped name it is saved (and stored on
		// disk) under: what the script wrote, and what cat takes.
		file := "-"
		if p, ok := runscript.ArtifactPath(name); ok {
			file = runscript.DisplayPath(p)
		}
		shown := runscript.EscapeHidden(name)
		vs, err := store.Versions(ctx, &artifact.VersionsRequest{AppName: app, UserID: userID, SessionID: sessionID, FileName: name})
		if err != nil || len(vs.Versions) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t?\t?\t?\t%v\n", file, shown, err)
			continue
		}
		latest := slices.Max(vs.Versions)
		mime, size := "?", "?"
		if v, err := store.GetArtifactVersion(ctx, &artifact.GetArtifactVersionRequest{AppName: app, UserID: userID, SessionID: sessionID, FileName: name, Version: latest}); err == nil {
			mime = v.ArtifactVersion.MimeType
		}
		if p, err := store.Path(app, userID, sessionID, name, latest); err == nil {
			if fi, err := os.Stat(p); err == nil {
				size = humanSize(fi.Size())
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d\t%s\t%s\n", file, shown, len(vs.Versions), latest, size, mime)
	}
	if err := tw.Flush(); err != nil {
		c.errorf("%v", err)
		return exitFailure
	}
	c.hiddenNote(hidden, deleted)
	return exitOK
}

// hiddenNote says how many artifacts of deleted files ls left out.
func (c *cli) hiddenNote(hidden int, deleted bool) {
	if hidden > 0 && !deleted {
		fmt.Fprintf(c.stderr, "adkskills: %s of files runs deleted not shown (--deleted lists them)\n", plural(hidden, "artifact", "artifacts"))
	}
}

func (c *cli) artifactsCat(ctx context.Context, store *fileartifact.Service, sc scope, name string, version int64) int {
	app, userID, sessionID := sc.app, sc.user, sc.session
	// NAME may be a script's file path: look under the name it was saved
	// under, directly when NAME cannot be an artifact name, else when NAME
	// itself is not found; then under the name an earlier release gave it.
	mapped := runscript.ArtifactName(name)
	lookupName := name
	if strings.ContainsAny(name, "/\\") {
		lookupName = mapped
	}
	p, err := store.Path(app, userID, sessionID, lookupName, version)
	if errors.Is(err, fs.ErrNotExist) && lookupName != mapped {
		p, err = store.Path(app, userID, sessionID, mapped, version)
	}
	if errors.Is(err, fs.ErrNotExist) {
		if old, ok := legacyName(ctx, store, sc, name); ok {
			p, err = store.Path(app, userID, sessionID, old, version)
		}
	}
	if err != nil {
		what := fmt.Sprintf("artifact %q", name)
		if version > 0 {
			what += fmt.Sprintf(" version %d", version)
		}
		if errors.Is(err, fs.ErrNotExist) {
			c.errorf("%s not found in session %q (see adkskills artifacts ls)", what, sessionID)
		} else {
			c.errorf("%s: %v", what, err)
		}
		return exitFailure
	}
	f, err := os.Open(p)
	if err != nil {
		c.errorf("%v", err)
		return exitFailure
	}
	defer f.Close()
	if _, err := io.Copy(c.stdout, f); err != nil {
		c.errorf("%v", err)
		return exitFailure
	}
	return exitOK
}

// legacyName finds the artifact an earlier release saved the file path p
// under (its names escaped with "%": "dist%2Freport.zip").
func legacyName(ctx context.Context, store *fileartifact.Service, sc scope, p string) (string, bool) {
	list, err := store.List(ctx, &artifact.ListRequest{AppName: sc.app, UserID: sc.user, SessionID: sc.session})
	if err != nil {
		return "", false
	}
	for _, name := range list.FileNames {
		if got, ok := runscript.ArtifactPath(name); ok && got == p && strings.Contains(name, "%") {
			return name, true
		}
	}
	return "", false
}
