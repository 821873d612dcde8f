package artifacttest

import (
	"fmt"
	"slices"
	"strings"

	"google.golang.org/genai"
)

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

// deletionRecord is the name of runscript's record of deleted files.
const deletionRecord = "~adkskills-deleted.json"

func record(s string) *genai.Part { return genai.NewPartFromBytes([]byte(s), "application/json") }
func txt(s string) *genai.Part    { return genai.NewPartFromText(s) }

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
	// its artifacts in every session of the user (see the package doc).
	hostileIDs = append(hostileIDs, step{list().in("elsewhere"), outcome{}}, step{versions("f").in(".."), vers(1)})

	return []scenario{
		{"Versioning", []step{
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
		{"RoundTrip", roundTrip},
		{"SaveIgnoresVersion", []step{
			{save("a", txt("1")).saving(7), ver(1)},
			{save("a", txt("2")).saving(1), ver(2)},
			{save("a", txt("3")).saving(-3), ver(3)},
			{versions("a"), vers(3, 2, 1)},
			{load("a", 1), part(txt("1"))},
			{load("a", 7), notExist},
		}},
		{"Missing", []step{
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
		// What runscript's record of deleted files relies on (its name is
		// runscript.DeletedArtifact): a JSON blob under a name with "~",
		// saved again and again beside files whose names have "∕"; a Load
		// of the latest gives the newest record, a session that has none
		// says fs.ErrNotExist, List shows it with the files, and every
		// version of a file stays loadable whatever is saved after it.
		{"DeletionRecord", []step{
			{load(deletionRecord, 0), notExist},
			{save("unpacked∕ppt∕slide2.xml", csv("v1")), ver(1)},
			{save("unpacked∕ppt∕slide2.xml", csv("v2")), ver(2)},
			{save(deletionRecord, record(`{"deleted":["unpacked∕ppt∕slide2.xml"]}`)), ver(1)},
			{save("unpacked∕ppt∕slide3.xml", csv("s3")), ver(1)},
			{save(deletionRecord, record(`{"deleted":[]}`)), ver(2)},
			{load(deletionRecord, 0), part(record(`{"deleted":[]}`))},
			{load(deletionRecord, 1), part(record(`{"deleted":["unpacked∕ppt∕slide2.xml"]}`))},
			{get(deletionRecord, 0), info(2, "application/json")},
			{list(), names("unpacked∕ppt∕slide2.xml", "unpacked∕ppt∕slide3.xml", deletionRecord)},
			{load("unpacked∕ppt∕slide2.xml", 1), part(csv("v1"))},
			{load("unpacked∕ppt∕slide2.xml", 0), part(csv("v2"))},
			{load(deletionRecord, 0).in("another"), notExist},
		}},
		{"DeleteVersion", []step{
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
			// One more than the newest, not than the count of versions.
			{save("a", txt("2nd")), ver(2)},
			{del("a", 1), success},
			{save("a", txt("3rd")), ver(3)},
			{versions("a"), vers(3, 2)},
			{load("a", 2), part(txt("2nd"))},
		}},
		{"DeleteAll", []step{
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
		{"UserScope", []step{
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
		{"Isolation", []step{
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
		{"HostileNames", hostileSteps},
		{"HostileIDs", hostileIDs},
		{"InvalidRequests", []step{
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
