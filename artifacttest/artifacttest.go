// Package artifacttest is the behaviour suite every ADK Go artifact.Service
// must pass, in the spirit of go-cloud's driver tests: one contract, one
// suite, every implementation (ADK's in-memory service, fileartifact, a
// database or remote store, yours).
//
//	func TestConformance(t *testing.T) {
//		artifacttest.Run(t, func() artifact.Service { return mystore.New(...) })
//	}
//
// The contract is the behaviour of ADK's artifact.InMemoryService, the
// reference: the wants were read from its source, and it passes the suite.
// The suite is black-box: it sends requests and compares what comes back,
// so a service whose artifacts live on another machine can run it too. Its
// subtests, in order:
//   - Versioning: versions count from 1, Load and GetArtifactVersion of the
//     latest (version 0 or less) or of a given version, Versions newest
//     first, List sorted;
//   - RoundTrip: every kind of part comes back as saved: binary and text,
//     invalid UTF-8, nil and empty InlineData, DisplayName, Text beside
//     InlineData or FileData, Thought, ThoughtSignature, PartMetadata; and
//     GetArtifactVersion reports the InlineData MIME type, or "text/plain"
//     for a text part;
//   - SaveIgnoresVersion: Save ignores SaveRequest.Version, as both of ADK's
//     services do (whatever the field's doc says);
//   - DeletionRecord: what runscript's record of deleted files relies on,
//     a JSON blob saved again and again under a name with "~" beside files
//     with "∕" in theirs, the latest loaded, the files' versions kept;
//   - Missing: a missing artifact or version is an error matching
//     fs.ErrNotExist, and deleting one is not an error;
//   - DeleteVersion, DeleteAll: Delete of one version or of them all, and
//     saving after; a new version is one more than the newest stored, so
//     the number of a deleted newest version is handed out again, as in both
//     of ADK's services;
//   - UserScope: "user:" names are shared by every session of a user and by
//     no one else's, other names are private to their session, and List
//     shows both;
//   - Isolation: apps, users and sessions are apart, and so are names and
//     IDs that differ only in case or in what a store might escape;
//   - HostileNames, HostileIDs: "..", NUL bytes, invalid UTF-8, 10,000
//     bytes, path separators in IDs: stored and listed like any other;
//   - InvalidRequests: a name with a path separator, a missing field, a part
//     with neither Text nor InlineData are refused with an error that does
//     not match fs.ErrNotExist;
//   - ConcurrentSaves: goroutines saving one artifact get distinct versions,
//     each holding what its save saved;
//   - LoadDuringSaves: a Load racing saves returns a whole version;
//   - DeleteDuringSaves: deletes racing saves make no call fail, and leave
//     the artifact working;
//   - AgreesWithInMemory: a long pseudo-random sequence of calls (apps,
//     users, sessions and names that differ in case, scope or nothing at all,
//     every kind of part, versions from -1 to 4, invalid names) answered
//     exactly as a fresh artifact.InMemoryService answers it, step by step.
//     The seed is fixed, so every run checks the same calls; pass
//     -artifacttest.seed=N to check others (0: a new seed each run). A
//     failure names the seed and the earlier calls that made the state.
//
// Run calls newService once per subtest and needs a service that holds no
// artifacts. It does not call t.Parallel, and its subtests can be picked
// with -run as usual (-run 'TestConformance/UserScope').
//
// ADK's own gcsartifact service stores only a part's payload and MIME type
// (a Text part comes back as InlineData): it does not pass RoundTrip.
//
// # What the suite leaves to each service
//
// Some behaviour of the in-memory service is an accident of its
// implementation, and a service may do better; the suite does not look:
//   - whether Save keeps the caller's part or a copy: the suite builds a
//     fresh part for every call and never changes a part it saved or
//     loaded, so aliasing (the in-memory service) and copying (fileartifact)
//     both pass;
//   - a session whose ID is "user": the in-memory service keeps "user:"
//     artifacts under that session key, so its List shows that session's
//     artifacts in every session of the user, and the suite never uses the
//     ID;
//   - the encoding of PartMetadata: the suite uses only strings, which
//     survive JSON (numbers would come back as float64);
//   - GetArtifactVersion's CanonicalURI, CreateTime and CustomMetadata,
//     which the in-memory service leaves empty;
//   - nil requests (the in-memory service panics) and canceled contexts (it
//     ignores them);
//   - whether List returns nil or an empty slice when there is nothing.
//
// A Save that fails while other goroutines save the same artifact is
// retried, as artifact.Service allows; a Save that keeps failing fails the
// suite.
package artifacttest

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io/fs"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/artifact"
	"google.golang.org/genai"
)

// defaultSeed is the seed AgreesWithInMemory uses unless told otherwise: a
// fixed one, so every run checks the same calls.
const defaultSeed = 1

var seedFlag = flag.Int64("artifacttest.seed", defaultSeed,
	"seed of the pseudo-random calls of artifacttest's AgreesWithInMemory; 0 picks a new seed each run")

// Run runs the whole suite against the services newService returns: a new,
// empty one for every subtest, so one scenario's artifacts cannot hide
// another's bug.
func Run(t *testing.T, newService func() artifact.Service) {
	for _, sc := range scenarios() {
		t.Run(sc.name, func(t *testing.T) { runScenario(t, newService(), sc.steps) })
	}
	t.Run("ConcurrentSaves", func(t *testing.T) { testConcurrentSaves(t, newService()) })
	t.Run("LoadDuringSaves", func(t *testing.T) { testLoadDuringSaves(t, newService()) })
	t.Run("DeleteDuringSaves", func(t *testing.T) { testDeleteDuringSaves(t, newService()) })
	t.Run("AgreesWithInMemory", func(t *testing.T) { testAgreesWithInMemory(t, newService()) })
}

// runScenario sends each step's call to svc and fails at the first answer
// that is not the step's want.
func runScenario(t *testing.T, svc artifact.Service, steps []step) {
	for i, st := range steps {
		got := do(t.Context(), svc, st.call)
		if diff := cmp.Diff(st.want, got); diff != "" {
			t.Fatalf("step %d: %v: (-want +got)\n%s", i, st.call.withDefaults(), diff)
		}
	}
}

// Defaults of a call: most steps act in one app, user and session.
const (
	app   = "app"
	user  = "ada"
	sess1 = "s1"
)

type opKind string

const (
	opSave     opKind = "Save"
	opLoad     opKind = "Load"
	opList     opKind = "List"
	opVersions opKind = "Versions"
	opDelete   opKind = "Delete"
	opGet      opKind = "GetArtifactVersion"
)

// call is one request; empty app, user and session mean the defaults
// unless raw is set (to send empty ones).
type call struct {
	op                 opKind
	app, user, session string
	name               string
	version            int64
	part               *genai.Part
	partName           string // what part is, when the call's String should say
	raw                bool
}

func save(name string, p *genai.Part) call { return call{op: opSave, name: name, part: p} }
func load(name string, v int64) call       { return call{op: opLoad, name: name, version: v} }
func list() call                           { return call{op: opList} }
func versions(name string) call            { return call{op: opVersions, name: name} }
func del(name string, v int64) call        { return call{op: opDelete, name: name, version: v} }
func get(name string, v int64) call        { return call{op: opGet, name: name, version: v} }
func (c call) in(session string) call      { c.session = session; return c }
func (c call) by(user string) call         { c.user = user; return c }
func (c call) of(app string) call          { c.app = app; return c }
func (c call) saving(v int64) call         { c.version = v; return c }

// String shows a call as a failure message names it: the fields its
// request carries.
func (c call) String() string {
	s := fmt.Sprintf("%s(app=%q user=%q session=%.40q", c.op, c.app, c.user, c.session)
	if c.op != opList {
		s += fmt.Sprintf(" name=%.40q", c.name)
	}
	if c.op != opList && c.op != opVersions {
		s += fmt.Sprintf(" version=%d", c.version)
	}
	if c.partName != "" {
		s += " part=" + c.partName
	}
	return s + ")"
}

// errClass is how a call failed, in terms every service shares: ADK's
// services report missing artifacts with errors matching fs.ErrNotExist
// and bad requests with other errors.
type errClass string

const (
	errNone     errClass = ""
	errNotExist errClass = "fs.ErrNotExist"
	errOther    errClass = "an error, not fs.ErrNotExist"
	errNil      errClass = "a nil response, no error"
)

// outcome is what a call returned, comparable across services.
type outcome struct {
	Version  int64       // Save, GetArtifactVersion
	Part     *genai.Part // Load
	Names    []string    // List
	Versions []int64     // Versions
	MIMEType string      // GetArtifactVersion
	Err      errClass
}

func ver(v int64) outcome               { return outcome{Version: v} }
func part(p *genai.Part) outcome        { return outcome{Part: p} }
func names(n ...string) outcome         { return outcome{Names: n} }
func vers(v ...int64) outcome           { return outcome{Versions: v} }
func info(v int64, mime string) outcome { return outcome{Version: v, MIMEType: mime} }

var (
	success  = outcome{}
	notExist = outcome{Err: errNotExist}
	invalid  = outcome{Err: errOther}
)

// or returns s, or def when s is empty.
func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// withDefaults fills in the default app, user and session, unless raw.
func (c call) withDefaults() call {
	if !c.raw {
		c.app, c.user, c.session = or(c.app, app), or(c.user, user), or(c.session, sess1)
	}
	return c
}

// do sends c to svc and reduces the answer to an outcome.
func do(ctx context.Context, svc artifact.Service, c call) outcome {
	c = c.withDefaults()
	o, err := send(ctx, svc, c)
	switch {
	case err == nil:
		return o
	case errors.Is(err, errNoResponse):
		return outcome{Err: errNil}
	case errors.Is(err, fs.ErrNotExist):
		return outcome{Err: errNotExist}
	default:
		return outcome{Err: errOther}
	}
}

// errNoResponse stands for a nil response that came without an error.
var errNoResponse = errors.New("nil response")

// send sends c, with its defaults filled in, to svc.
func send(ctx context.Context, svc artifact.Service, c call) (outcome, error) {
	var o outcome
	switch c.op {
	case opSave:
		r, err := svc.Save(ctx, &artifact.SaveRequest{AppName: c.app, UserID: c.user, SessionID: c.session, FileName: c.name, Part: c.part, Version: c.version})
		if err != nil || r == nil {
			return o, orNoResponse(err)
		}
		o.Version = r.Version
	case opLoad:
		r, err := svc.Load(ctx, &artifact.LoadRequest{AppName: c.app, UserID: c.user, SessionID: c.session, FileName: c.name, Version: c.version})
		if err != nil || r == nil {
			return o, orNoResponse(err)
		}
		o.Part = r.Part
	case opList:
		r, err := svc.List(ctx, &artifact.ListRequest{AppName: c.app, UserID: c.user, SessionID: c.session})
		if err != nil || r == nil {
			return o, orNoResponse(err)
		}
		if len(r.FileNames) > 0 { // nil or empty: either is nothing
			o.Names = r.FileNames
		}
	case opVersions:
		r, err := svc.Versions(ctx, &artifact.VersionsRequest{AppName: c.app, UserID: c.user, SessionID: c.session, FileName: c.name})
		if err != nil || r == nil {
			return o, orNoResponse(err)
		}
		if len(r.Versions) > 0 {
			o.Versions = r.Versions
		}
	case opDelete:
		return o, svc.Delete(ctx, &artifact.DeleteRequest{AppName: c.app, UserID: c.user, SessionID: c.session, FileName: c.name, Version: c.version})
	case opGet:
		r, err := svc.GetArtifactVersion(ctx, &artifact.GetArtifactVersionRequest{AppName: c.app, UserID: c.user, SessionID: c.session, FileName: c.name, Version: c.version})
		if err != nil || r == nil || r.ArtifactVersion == nil {
			return o, orNoResponse(err)
		}
		o.Version, o.MIMEType = r.ArtifactVersion.Version, r.ArtifactVersion.MimeType
	}
	return o, nil
}

// orNoResponse is err, or errNoResponse when there is none (the response
// was nil).
func orNoResponse(err error) error {
	if err == nil {
		return errNoResponse
	}
	return err
}
