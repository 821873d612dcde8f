package fileartifact

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"google.golang.org/adk/artifact"
	"google.golang.org/genai"
)

// The behaviour suite: one table of scenarios that every artifact.Service
// here must pass, run against ADK's in-memory service (the reference) and
// against ours. The wants were read from ADK's inmemory.go and checked
// against it by this very suite.

// implementations are the services the suite runs against.
var implementations = []struct {
	name string
	new  func(t *testing.T) artifact.Service
}{
	{"inmemory", func(*testing.T) artifact.Service { return artifact.InMemoryService() }},
	{"file", func(t *testing.T) artifact.Service { return newStore(t) }},
}

// newStore returns a Service on a fresh directory, and checks when the test
// ends that nothing was created beside that directory.
func newStore(t testing.TB) *Service {
	t.Helper()
	parent := t.TempDir()
	s, err := New(parent + "/store")
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { assertOnlyStore(t, parent) })
	return s
}

func TestServiceSuite(t *testing.T) {
	for _, impl := range implementations {
		t.Run(impl.name, func(t *testing.T) { runServiceSuite(t, impl.new) })
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
func (c call) String() string {
	return fmt.Sprintf("%s(app=%q user=%q session=%q name=%.40q version=%d)", c.op, c.app, c.user, c.session, c.name, c.version)
}

// errClass is how a call failed, in terms both services share: ADK's
// services report missing artifacts with fs.ErrNotExist and bad requests
// with other errors.
type errClass string

const (
	errNone     errClass = ""
	errNotExist errClass = "not exist"
	errInvalid  errClass = "invalid"
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
	invalid  = outcome{Err: errInvalid}
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
	var o outcome
	var err error
	switch c.op {
	case opSave:
		var r *artifact.SaveResponse
		if r, err = svc.Save(ctx, &artifact.SaveRequest{AppName: c.app, UserID: c.user, SessionID: c.session, FileName: c.name, Part: c.part, Version: c.version}); err == nil {
			o.Version = r.Version
		}
	case opLoad:
		var r *artifact.LoadResponse
		if r, err = svc.Load(ctx, &artifact.LoadRequest{AppName: c.app, UserID: c.user, SessionID: c.session, FileName: c.name, Version: c.version}); err == nil {
			o.Part = r.Part
		}
	case opList:
		var r *artifact.ListResponse
		if r, err = svc.List(ctx, &artifact.ListRequest{AppName: c.app, UserID: c.user, SessionID: c.session}); err == nil {
			o.Names = r.FileNames
		}
	case opVersions:
		var r *artifact.VersionsResponse
		if r, err = svc.Versions(ctx, &artifact.VersionsRequest{AppName: c.app, UserID: c.user, SessionID: c.session, FileName: c.name}); err == nil {
			o.Versions = r.Versions
		}
	case opDelete:
		err = svc.Delete(ctx, &artifact.DeleteRequest{AppName: c.app, UserID: c.user, SessionID: c.session, FileName: c.name, Version: c.version})
	case opGet:
		var r *artifact.GetArtifactVersionResponse
		if r, err = svc.GetArtifactVersion(ctx, &artifact.GetArtifactVersionRequest{AppName: c.app, UserID: c.user, SessionID: c.session, FileName: c.name, Version: c.version}); err == nil {
			o.Version, o.MIMEType = r.ArtifactVersion.Version, r.ArtifactVersion.MimeType
		}
	}
	switch {
	case err == nil:
	case errors.Is(err, fs.ErrNotExist):
		o = outcome{Err: errNotExist}
	default:
		o = outcome{Err: errInvalid}
	}
	return o
}

// Parts the scenarios save. Each is built fresh, so a service that keeps the
// caller's pointer cannot make a comparison pass by aliasing.
func bin() *genai.Part {
	b := make([]byte, 256)
	for i := range b {
		b[i] = byte(i)
	}
	return genai.NewPartFromBytes(b, "image/png")
}
func csv(s string) *genai.Part { return genai.NewPartFromBytes([]byte(s), "text/csv") }
func txt(s string) *genai.Part { return genai.NewPartFromText(s) }

// odd parts: every shape a Save accepts, and the MIME type GetArtifactVersion
// reports for it.
var oddParts = []struct {
	name string
	part func() *genai.Part
	mime string
}{
	{"binary", bin, "image/png"},
	{"text", func() *genai.Part { return txt("héllo\nwörld\n") }, "text/plain"},
	{"text-invalid-utf8", func() *genai.Part { return txt("\xff\xfe\x00bad") }, "text/plain"},
	{"inline-nil-data", func() *genai.Part { return genai.NewPartFromBytes(nil, "application/octet-stream") }, "application/octet-stream"},
	{"inline-empty-data-no-mime", func() *genai.Part { return genai.NewPartFromBytes([]byte{}, "") }, ""},
	{"inline-display-name", func() *genai.Part {
		return &genai.Part{InlineData: &genai.Blob{Data: []byte("a,b\n"), MIMEType: "text/csv", DisplayName: "report.csv"}}
	}, "text/csv"},
	{"text-and-inline-and-more", func() *genai.Part {
		return &genai.Part{
			Text:             "caption",
			InlineData:       &genai.Blob{Data: []byte("x"), MIMEType: "application/json"},
			Thought:          true,
			ThoughtSignature: []byte{1, 2, 3},
			PartMetadata:     map[string]any{"source": "script", "tags": []any{"a", "b"}},
		}
	}, "application/json"},
	{"text-and-file-data", func() *genai.Part {
		return &genai.Part{Text: "see file", FileData: &genai.FileData{FileURI: "gs://b/o", MIMEType: "image/png"}}
	}, "text/plain"},
}

// step is one call and what it must return.
type step struct {
	call
	want outcome
}

// scenario is a sequence of steps on a fresh service.
type scenario struct {
	name  string
	steps []step
}

func scenarios() []scenario {
	long := strings.Repeat("L", 10_000)
	longSession := strings.Repeat("s/", 3_000)
	var roundTrip []step
	for _, p := range oddParts {
		roundTrip = append(roundTrip,
			step{save(p.name, p.part()), ver(1)},
			step{load(p.name, 0), part(p.part())},
			step{load(p.name, 1), part(p.part())},
			step{get(p.name, 0), info(1, p.mime)},
		)
	}
	hostile := []string{".", "..", "user:..", "user:.", "...", ".hidden", "trailing.", "a\x00b", "\xff\xfe", "user:\xff",
		long, "user:" + long, " ", "con", "~", "%2e", "!a", "A", "a", "é", "a:b", "*?<>|\"", "\t\n"}
	var hostileSteps []step
	for _, n := range hostile {
		hostileSteps = append(hostileSteps,
			step{save(n, csv("1:"+n)), ver(1)},
			step{save(n, csv("2:"+n)), ver(2)},
			step{load(n, 1), part(csv("1:" + n))},
			step{load(n, 0), part(csv("2:" + n))},
			step{versions(n), vers(2, 1)},
			step{get(n, 0), info(2, "text/csv")},
		)
	}
	sortedHostile := slices.Sorted(slices.Values(hostile))
	hostileSteps = append(hostileSteps,
		step{list(), names(sortedHostile...)},
		step{del(long, 0), success},
		step{del("..", 0), success},
		step{del("user:"+long, 1), success},
		step{list(), names(slices.DeleteFunc(slices.Clone(sortedHostile), func(s string) bool { return s == long || s == ".." })...)},
		step{versions("user:" + long), vers(2)},
	)
	var hostileIDs []step
	for i, id := range []string{"..", ".", "../../escape", "/abs", "a/b", `a\b`, "a%2fb", "\x00", "\xff", longSession, "USER", "User"} {
		body := fmt.Sprint("id ", i)
		hostileIDs = append(hostileIDs,
			step{save("f", csv(body)).of(id), ver(1)},
			step{save("f", csv(body)).by(id), ver(1)},
			step{save("f", csv(body)).in(id), ver(1)},
			step{save("user:f", csv(body)).of(id).by(id), ver(1)},
			step{load("f", 0).of(id), part(csv(body))},
			step{load("f", 0).by(id), part(csv(body))},
			step{load("f", 0).in(id), part(csv(body))},
			step{list().of(id).by(id).in(id), names("user:f")},
		)
	}
	// A session named exactly "user" is left out: ADK's in-memory List shows
	// its artifacts in every session of the user (TestSessionNamedUser).
	hostileIDs = append(hostileIDs, step{list().in("elsewhere"), outcome{}}, step{versions("f").in(".."), vers(1)})

	return []scenario{
		{"versions count from 1 and load latest or given", []step{
			{save("a", bin()), ver(1)},
			{save("a", csv("v2")), ver(2)},
			{save("a", txt("v3")), ver(3)},
			{save("b", txt("b1")), ver(1)},
			{versions("a"), vers(3, 2, 1)},
			{versions("b"), vers(1)},
			{load("a", 0), part(txt("v3"))},
			{load("a", 1), part(bin())},
			{load("a", 2), part(csv("v2"))},
			{load("a", 3), part(txt("v3"))},
			{load("a", -1), part(txt("v3"))},
			{load("a", 4), notExist},
			{get("a", 0), info(3, "text/plain")},
			{get("a", -5), info(3, "text/plain")},
			{get("a", 1), info(1, "image/png")},
			{get("a", 2), info(2, "text/csv")},
			{get("a", 4), notExist},
			{list(), names("a", "b")},
		}},
		{"every kind of part round-trips", roundTrip},
		{"Save ignores an explicit Version", []step{
			{save("a", txt("1")).saving(7), ver(1)},
			{save("a", txt("2")).saving(1), ver(2)},
			{save("a", txt("3")).saving(-3), ver(3)},
			{versions("a"), vers(3, 2, 1)},
			{load("a", 1), part(txt("1"))},
			{load("a", 7), notExist},
		}},
		{"missing artifacts", []step{
			{load("x", 0), notExist},
			{load("x", 2), notExist},
			{versions("x"), notExist},
			{get("x", 0), notExist},
			{get("x", 1), notExist},
			{list(), outcome{}},
			{del("x", 0), success},
			{del("x", 3), success},
			{del("user:x", 0), success},
			{list(), outcome{}},
		}},
		{"delete one version", []step{
			{save("a", txt("1")), ver(1)},
			{save("a", txt("2")), ver(2)},
			{save("a", txt("3")), ver(3)},
			{del("a", 2), success},
			{versions("a"), vers(3, 1)},
			{load("a", 2), notExist},
			{get("a", 2), notExist},
			{load("a", 0), part(txt("3"))},
			{del("a", 2), success},
			{del("a", -1), success},
			{del("a", 99), success},
			{versions("a"), vers(3, 1)},
			{del("a", 3), success},
			{load("a", 0), part(txt("1"))},
			{get("a", 0), info(1, "text/plain")},
			{save("a", txt("again")), ver(2)},
			{versions("a"), vers(2, 1)},
			{del("a", 1), success},
			{del("a", 2), success},
			{versions("a"), notExist},
			{load("a", 0), notExist},
			{list(), outcome{}},
			{save("a", txt("fresh")), ver(1)},
		}},
		{"delete every version", []step{
			{save("a", txt("1")), ver(1)},
			{save("a", txt("2")), ver(2)},
			{save("b", txt("b")), ver(1)},
			{save("user:u", txt("u")), ver(1)},
			{del("a", 0), success},
			{load("a", 0), notExist},
			{load("a", 1), notExist},
			{versions("a"), notExist},
			{list(), names("b", "user:u")},
			{save("a", txt("new")), ver(1)},
			{load("a", 0), part(txt("new"))},
			{del("user:u", 0).in("s2"), success},
			{list(), names("a", "b")},
			{del("a", 0), success},
			{del("b", 0), success},
			{list(), outcome{}},
		}},
		{"user scope is shared by the user's sessions", []step{
			{save("user:cfg", txt("c1")), ver(1)},
			{save("notes", txt("n1")), ver(1)},
			{load("user:cfg", 0).in("s2"), part(txt("c1"))},
			{save("user:cfg", txt("c2")).in("s2"), ver(2)},
			{versions("user:cfg").in("s3"), vers(2, 1)},
			{get("user:cfg", 0).in("s3"), info(2, "text/plain")},
			{load("user:cfg", 1).in("s3"), part(txt("c1"))},
			{list(), names("notes", "user:cfg")},
			{list().in("s2"), names("user:cfg")},
			{load("notes", 0).in("s2"), notExist},
			{load("user:cfg", 0).by("bob"), notExist},
			{list().by("bob"), outcome{}},
			{load("user:cfg", 0).of("other"), notExist},
			{save("User:cfg", txt("session-scoped")), ver(1)},
			{save("user:", txt("bare prefix")), ver(1)},
			{list().in("s2"), names("user:", "user:cfg")},
			{list(), names("User:cfg", "notes", "user:", "user:cfg")},
			{load("User:cfg", 0).in("s2"), notExist},
			{load("user:", 0).in("s9"), part(txt("bare prefix"))},
			{del("user:cfg", 0).in("s3"), success},
			{load("user:cfg", 0), notExist},
			{list(), names("User:cfg", "notes", "user:")},
		}},
		{"apps users and sessions are isolated", []step{
			{save("a", txt("s1")), ver(1)},
			{save("a", txt("s2")).in("s2"), ver(1)},
			{save("a", txt("bob")).by("bob"), ver(1)},
			{save("a", txt("other")).of("other"), ver(1)},
			{save("a", txt("S1")).in("S1"), ver(1)},
			{save("a", txt("!s1")).in("!s1"), ver(1)},
			{save("a", txt("%53")).in("%53"), ver(1)},
			{save("A", txt("upper")), ver(1)},
			{save("!a", txt("bang")), ver(1)},
			{save("%41", txt("pct")), ver(1)},
			{load("a", 0), part(txt("s1"))},
			{load("a", 0).in("s2"), part(txt("s2"))},
			{load("a", 0).by("bob"), part(txt("bob"))},
			{load("a", 0).of("other"), part(txt("other"))},
			{load("a", 0).in("S1"), part(txt("S1"))},
			{load("a", 0).in("!s1"), part(txt("!s1"))},
			{load("a", 0).in("%53"), part(txt("%53"))},
			{load("A", 0), part(txt("upper"))},
			{load("!a", 0), part(txt("bang"))},
			{load("%41", 0), part(txt("pct"))},
			{list(), names("!a", "%41", "A", "a")},
			{list().in("s2"), names("a")},
		}},
		{"hostile names are stored safely", hostileSteps},
		{"hostile app user and session IDs are stored safely", hostileIDs},
		{"invalid requests are rejected", []step{
			{save("a/b", txt("x")), invalid},
			{save(`a\b`, txt("x")), invalid},
			{save("user:../../x", txt("x")), invalid},
			{save("/abs", txt("x")), invalid},
			{save("", txt("x")), invalid},
			{save("a", nil), invalid},
			{save("a", &genai.Part{}), invalid},
			{save("a", &genai.Part{FileData: &genai.FileData{FileURI: "gs://b/o"}}), invalid},
			{call{op: opSave, name: "a", part: txt("x"), raw: true, user: user, session: sess1}, invalid},
			{call{op: opSave, name: "a", part: txt("x"), raw: true, app: app, session: sess1}, invalid},
			{call{op: opSave, name: "a", part: txt("x"), raw: true, app: app, user: user}, invalid},
			{load("../a/b", 0), invalid},
			{load("", 0), invalid},
			{versions(`..\x`), invalid},
			{get("a/", 0), invalid},
			{del("/", 0), invalid},
			{call{op: opList, raw: true, app: app, user: user}, invalid},
			{call{op: opLoad, name: "a", raw: true, app: app, user: user}, invalid},
			{call{op: opVersions, name: "a", raw: true, user: user, session: sess1}, invalid},
			{call{op: opDelete, name: "a", raw: true, app: app, session: sess1}, invalid},
			{call{op: opGet, name: "a", raw: true}, invalid},
			{list(), outcome{}},
		}},
	}
}

// runServiceSuite runs every scenario on a fresh service from newService.
func runServiceSuite(t *testing.T, newService func(t *testing.T) artifact.Service) {
	for _, sc := range scenarios() {
		t.Run(sc.name, func(t *testing.T) {
			svc := newService(t)
			for i, st := range sc.steps {
				got := do(t.Context(), svc, st.call)
				if diff := cmp.Diff(st.want, got); diff != "" {
					t.Fatalf("step %d: %v: (-want +got)\n%s", i, st.call.withDefaults(), diff)
				}
			}
		})
	}
}

// TestAgreesWithInMemory drives ADK's in-memory service and ours with the
// same long pseudo-random sequence of calls and requires identical answers
// at every step: the suite's scenarios say what we expect, this catches
// what they did not think of.
func TestAgreesWithInMemory(t *testing.T) {
	ref, svc := artifact.InMemoryService(), newStore(t)
	rng := rand.New(rand.NewPCG(4, 7))
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	steps := 600
	if testing.Short() {
		steps = 150
	}
	for i := range steps {
		c := call{
			app:     pick("app", "App"),
			user:    pick("ada", "bob"),
			session: pick("s1", "s2", ".."),
			name:    pick("a", "A", "user:a", "user:A", "..", "user:..", "user:", "bad/name"),
			version: int64(rng.IntN(6)) - 1,
		}
		switch n := rng.IntN(10); {
		case n < 4:
			c.op = opSave
			p := oddParts[rng.IntN(len(oddParts))]
			c.part = p.part()
		case n < 6:
			c.op = opLoad
		case n < 7:
			c.op = opList
		case n < 8:
			c.op = opVersions
		case n < 9:
			c.op = opDelete
			if rng.IntN(2) == 0 {
				c.version = 0
			}
		default:
			c.op = opGet
		}
		want, got := do(t.Context(), ref, c), do(t.Context(), svc, c)
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("step %d: %v: (-inmemory +file)\n%s", i, c, diff)
		}
	}
}
