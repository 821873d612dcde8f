package main

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log"
	"maps"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/browser"
	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/model"

	"github.com/adkskills/adkskills/fileartifact"
	"github.com/adkskills/adkskills/tools/runscript"
)

// browserWait bounds each wait for the web UI to show something: generous,
// because a loaded CI machine can be slow, and never a fixed sleep.
const browserWait = 30 * time.Second

// syncBuffer is a bytes.Buffer safe for the writers of a running server.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// webServer is adkskills web running in-process on a free port, with a
// scripted model in place of Gemini, or the demo model.
type webServer struct {
	url   string
	store *fileartifact.Service
	stop  func() // stops the server and waits for the command to end; also at the test's end
}

// startWeb runs the web command as main does, with args after "web", until
// the test ends. The port is picked free; a port taken meanwhile is retried.
// With a nil m the command runs with no key at all (for --demo).
func startWeb(t *testing.T, m model.LLM, args ...string) *webServer {
	t.Helper()
	return startWebWith(t, m, nil, args...)
}

// startWebWith is startWeb with more environment variables.
func startWebWith(t *testing.T, m model.LLM, extra map[string]string, args ...string) *webServer {
	t.Helper()
	return startWebEnv(t, m, extra, env{}, args...)
}

// startWebEnv is startWebWith with an env to start from (its getenv is
// replaced).
func startWebEnv(t *testing.T, m model.LLM, extra map[string]string, e env, args ...string) *webServer {
	t.Helper()
	vars, dir := store(t)
	maps.Copy(vars, extra)
	e.getenv = func(k string) string { return vars[k] }
	if m != nil {
		vars["GOOGLE_API_KEY"] = "test-key" // never used: the scripted model answers
		e.newModel = func(context.Context, string) (model.LLM, error) { return m, nil }
	}
	// ADK's launcher logs each request through the standard logger: keep
	// it for a failure's report.
	var logs syncBuffer
	log.SetOutput(&logs)
	t.Cleanup(func() {
		log.SetOutput(os.Stderr)
		if t.Failed() {
			t.Logf("server log:\n%s", logs.String())
		}
	})
	for attempt := 0; ; attempt++ {
		port := freePort(t)
		ctx, cancel := context.WithCancel(context.Background())
		var stdout, stderr syncBuffer
		done := make(chan int, 1)
		go func() {
			done <- run(ctx, append([]string{"web", "--port", fmt.Sprint(port)}, args...), strings.NewReader(""), &stdout, &stderr, e)
		}()
		base := fmt.Sprintf("http://127.0.0.1:%d", port)
		if err := waitHealthy(base, done); err != nil {
			cancel()
			if strings.Contains(stderr.String(), "address already in use") && attempt < 3 {
				continue
			}
			t.Fatalf("adkskills web did not come up: %v\nstdout: %s\nstderr: %s", err, stdout.String(), stderr.String())
		}
		stop := sync.OnceFunc(func() {
			cancel()
			select {
			case code := <-done:
				assert.Equal(t, exitOK, code, "adkskills web exits 0 when stopped: %s", stderr.String())
			case <-time.After(browserWait):
				t.Errorf("adkskills web did not stop within %v", browserWait)
			}
		})
		t.Cleanup(stop)
		s, err := fileartifact.New(dir)
		require.NoError(t, err)
		return &webServer{url: base, store: s, stop: stop}
	}
}

// freePort is a TCP port nothing listens on just now.
func freePort(t *testing.T) int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitHealthy waits until the server answers /health, or the command ends.
func waitHealthy(base string, done <-chan int) error {
	deadline := time.Now().Add(browserWait)
	for time.Now().Before(deadline) {
		select {
		case code := <-done:
			return fmt.Errorf("it exited with status %d", code)
		default:
		}
		if resp, err := http.Get(base + "/health"); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
		time.Sleep(20 * time.Millisecond)
	}
	return fmt.Errorf("no answer on %s/health within %v", base, browserWait)
}

// chromium finds the browser, or skips the test when none is installed (on
// CI, where .ci/run installs it, a missing browser fails the test).
func chromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatal("Chromium is not installed; .ci/run installs Debian's chromium package")
	}
	t.Skip("Chromium is not installed: install Debian's chromium package (apt-get install chromium) to run the browser test")
	return ""
}

// page is one browser tab on the web UI.
type page struct {
	t   *testing.T
	ctx context.Context // the tab; each action gets its own bound
	dir string          // where screenshots and downloads go

	mu   sync.Mutex
	urls []*url.URL // every URL the tab requested
}

// requested returns the URLs the tab has requested so far.
func (p *page) requested() []*url.URL {
	p.mu.Lock()
	defer p.mu.Unlock()
	return slices.Clone(p.urls)
}

// openBrowser starts headless Chromium with a fresh profile. On failure the
// test leaves a screenshot and the page's HTML in its temporary folder (or
// in $ADKSKILLS_BROWSER_ARTIFACTS, to keep them) and logs their paths.
func openBrowser(t *testing.T, exe string) *page {
	dir := t.TempDir()
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(exe), chromedp.UserDataDir(filepath.Join(dir, "profile")),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun, chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-quic", true), chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true), chromedp.Flag("disable-sync", true),
		chromedp.Flag("disable-dev-shm-usage", true), chromedp.WindowSize(1400, 1000),
	}
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	p := &page{t: t, ctx: ctx, dir: dir}
	// Start the browser on the tab's own context: one started under an
	// action's bounded context would end with it.
	if err := chromedp.Do(ctx); err != nil {
		cancelTab()
		cancelAlloc()
		t.Fatalf("starting %s: %v", exe, err)
	}
	err := chromedp.Listen(ctx, func(ev any) {
		if req, ok := ev.(*network.EventRequestWillBeSent); ok {
			if u, err := url.Parse(req.Request.URL); err == nil {
				p.mu.Lock()
				p.urls = append(p.urls, u)
				p.mu.Unlock()
			}
		}
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		if t.Failed() {
			p.keepEvidence()
		}
		cancelTab()
		cancelAlloc() // waits for the browser to exit
	})
	return p
}

// keepEvidence saves a screenshot and the page's HTML, and logs where.
func (p *page) keepEvidence() {
	dir := p.dir
	if d := os.Getenv("ADKSKILLS_BROWSER_ARTIFACTS"); d != "" {
		dir = d
	}
	ctx, cancel := context.WithTimeout(p.ctx, 10*time.Second)
	defer cancel()
	if shot, err := chromedp.Run(ctx, chromedp.FullScreenshot(100)); err == nil {
		name := filepath.Join(dir, "failure.png")
		if os.WriteFile(name, shot, 0o644) == nil {
			p.t.Logf("screenshot: %s", name)
		}
	}
	if html, err := chromedp.Run(ctx, chromedp.OuterHTML(chromedp.CSS("html"))); err == nil {
		name := filepath.Join(dir, "failure.html")
		if os.WriteFile(name, []byte(html), 0o644) == nil {
			p.t.Logf("page HTML: %s", name)
		}
	}
}

// do runs actions, failing the test with what it was doing.
func (p *page) do(what string, actions ...chromedp.Action[chromedp.Void]) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, browserWait)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		p.t.Fatalf("%s: %v", what, err)
	}
}

// waitFor waits until the JavaScript expression is truthy.
func (p *page) waitFor(what, expr string) {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, browserWait+5*time.Second)
	defer cancel()
	if _, err := chromedp.Run(ctx, chromedp.Poll[bool]("!!("+expr+")", chromedp.WithPollingTimeout(browserWait), chromedp.WithPollingInterval(50*time.Millisecond))); err != nil {
		p.t.Fatalf("waiting until %s: %v", what, err)
	}
}

// eval evaluates a JavaScript expression.
func (p *page) eval(what, expr string) string {
	p.t.Helper()
	ctx, cancel := context.WithTimeout(p.ctx, browserWait)
	defer cancel()
	out, err := chromedp.Run(ctx, chromedp.Evaluate[string](expr))
	if err != nil {
		p.t.Fatalf("%s: %v", what, err)
	}
	return out
}

// click waits for the element the expression finds and clicks it in the
// page (element.click()), so a layout that shifts under a loaded machine
// cannot move the click onto another element.
func (p *page) click(what, expr string) {
	p.t.Helper()
	p.waitFor(what+": the element is there", expr)
	p.eval(what, "("+expr+`).click(), "clicked"`)
}

// js quotes s as a JavaScript string.
func js(s string) string { return fmt.Sprintf("%q", s) }

// Expressions over adk-web's DOM (the Angular app ADK's launcher embeds).
const (
	// chips are the function call and response buttons of the chat: the
	// icon's ligature ("bolt" for a call, "check" for a response) and the
	// tool's name.
	chipsJS = `[...document.querySelectorAll("button.function-event-button")]`
	// botTextJS is the model's text in the chat.
	botTextJS = `[...document.querySelectorAll(".bot-message app-markdown")].map(e => e.textContent).join("\n")`
)

// chip is an expression for the chat's button of tool with icon.
func chip(tool, icon string) string {
	return fmt.Sprintf(`%s.filter(b => b.querySelector(".mdc-button__label")?.textContent.trim() === %s && b.querySelector("mat-icon")?.textContent.trim() === %s)`, chipsJS, js(tool), js(icon))
}

// say sends a message from the chat box.
func (p *page) say(text string) {
	p.t.Helper()
	p.do("sending "+text, chromedp.SendKeys(chromedp.CSS("textarea.chat-input-box"), text+"\r"))
}

// artifactBox is an expression for the artifacts panel's entry of name.
func artifactBox(name string) string {
	return fmt.Sprintf(`[...document.querySelectorAll("app-artifact-tab .artifact-box")].find(b => b.querySelector("button.link-style-button")?.textContent.trim() === %s)`, js(name))
}

// download clicks the artifacts panel's Download button of name and returns
// the bytes the browser saved.
func (p *page) download(name string) []byte {
	p.t.Helper()
	dir := filepath.Join(p.dir, fmt.Sprintf("downloads-%d", time.Now().UnixNano()))
	require.NoError(p.t, os.Mkdir(dir, 0o755))
	ctx, cancel := context.WithTimeout(p.ctx, browserWait)
	defer cancel()
	on := true
	_, err := chromedp.CallBrowser(ctx, browser.SetDownloadBehavior, browser.SetDownloadBehaviorParams{
		Behavior: browser.SetDownloadBehaviorBehaviorAllowAndName, DownloadPath: dir, EventsEnabled: &on})
	require.NoError(p.t, err)
	progress := chromedp.BrowserEvents(ctx, browser.DownloadProgress)
	p.click("downloading "+name, artifactBox(name)+`?.querySelector("button.download-button")`)
	for ev, err := range progress {
		if err != nil {
			entries, _ := os.ReadDir(dir)
			p.t.Fatalf("the download of %s did not finish within %v: %v (%d file(s) in %s)", name, browserWait, err, len(entries), dir)
		}
		switch ev.State {
		case browser.DownloadProgressStateCompleted:
			data, err := os.ReadFile(filepath.Join(dir, ev.GUID))
			require.NoError(p.t, err)
			return data
		case browser.DownloadProgressStateCanceled:
			p.t.Fatalf("the browser cancelled the download of %s", name)
		}
	}
	p.t.Fatalf("the download of %s did not finish", name)
	return nil
}

// answer types text into the pending confirmation's response box of the web
// UI and sends it.
func (p *page) answer(text string) {
	p.t.Helper()
	const box = `[...document.querySelectorAll("app-long-running-response input.response-input")].at(-1)`
	p.waitFor("a confirmation asks for an answer", box)
	p.do("answering "+text, chromedp.SendKeys(chromedp.JSPath(box), text+"\r"))
}

// latest is the bytes of an artifact's version in the store (0: latest).
func (s *webServer) load(t *testing.T, sessionID, path string, version int64) []byte {
	t.Helper()
	resp, err := s.store.Load(context.Background(), &artifact.LoadRequest{AppName: webAgentName, UserID: "user", SessionID: sessionID,
		FileName: runscript.ArtifactName(path), Version: version})
	require.NoError(t, err, "%s v%d", path, version)
	return resp.Part.InlineData.Data
}

// typeMessage puts text, which may span lines, into the chat box and sends
// it: the box sends on Enter, so the text is set as the user's input and
// Enter pressed after it.
func (p *page) typeMessage(text string) {
	p.t.Helper()
	const box = `document.querySelector("textarea.chat-input-box")`
	p.waitFor("the chat box is there", box)
	p.eval("typing "+text, `(() => { const b = `+box+`; b.value = `+js(text)+`; b.dispatchEvent(new Event("input", {bubbles: true})); return "typed"; })()`)
	p.do("sending "+text, chromedp.SendKeys(chromedp.CSS("textarea.chat-input-box"), "\r"))
}

// externalHosts are the hosts other than this machine that adk-web's page
// loads from, as docs/web-ui.md says: Google's font servers, for its text
// and icon fonts.
var externalHosts = []string{"fonts.googleapis.com", "fonts.gstatic.com"}

// TestWebUIInABrowser drives adkskills web --demo in headless Chromium, with
// no key: the demo model answers a greeting with the skills, a "run" message
// is the run_skill_script call whose response the chat shows, the artifacts
// panel opens the image a run saved and each version of a file from a
// subfolder, and the UI's confirmation flow runs an approved inline script
// and not a rejected one. The page loads nothing from other hosts but the
// fonts docs/web-ui.md names.
func TestWebUIInABrowser(t *testing.T) {
	exe := chromium(t)
	start := time.Now()
	srv := startWeb(t, nil, "--demo", "--skills", testSkills(t), "--timeout", "30s")
	p := openBrowser(t, exe)

	p.do("opening the web UI", chromedp.Navigate(srv.url+"/ui/"))
	p.waitFor("the chat box is ready", `document.querySelector("textarea.chat-input-box")`)
	p.waitFor("the UI has a session", `/^[0-9a-f-]{36}$/.test(document.querySelector(".toolbar-session-id")?.textContent.trim() ?? "")`)
	sessionID := p.eval("reading the session", `document.querySelector(".toolbar-session-id").textContent.trim()`)

	// A greeting gets the skills and how to ask.
	p.say("hello")
	p.waitFor("the demo's help is shown", botTextJS+`.includes("I am the adkskills demo model")`)
	assert.Contains(t, p.eval("reading the help", botTextJS), "report-writer")

	// A run message is the call: the chat shows it and its response.
	p.say("run report-writer scripts/report.py Ada")
	p.waitFor("the call and its response are shown", chip("run_skill_script", "bolt")+".length === 1 && "+chip("run_skill_script", "check")+".length === 1")
	p.waitFor("the model's summary is shown", botTextJS+`.includes("ran: success, exit code 0")`)
	p.click("opening the response", chip("run_skill_script", "check")+"[0]")
	p.waitFor("the response's details are shown", `document.querySelector(".details-panel-container")?.textContent.includes("report for Ada")`)
	details := p.eval("reading the details", `document.querySelector(".details-panel-container").textContent`)
	assert.Contains(t, details, "success")
	assert.Contains(t, details, runscript.ArtifactName("dist/data/summary.json"))
	p.click("closing the details", `[...document.querySelectorAll(".details-panel-container button")].find(b => b.textContent.includes("close"))`)

	// A second run is version 2. The artifacts panel opens the image the
	// run saved, and each version of the file from a subfolder.
	p.say("run report-writer scripts/report.py Bob")
	p.waitFor("the second summary is shown", chip("run_skill_script", "check")+".length === 2 && "+botTextJS+`.split("ran: success").length === 3`)
	p.click("opening the artifacts panel", `[...document.querySelectorAll("[role=tab]")].find(e => e.textContent.includes("Artifacts"))`)
	p.click("opening the badge", artifactBox("badge.png")+`?.querySelector("button.link-style-button")`)
	p.waitFor("the badge opens in a dialog", `document.querySelector("mat-dialog-container img")?.src.startsWith("data:image/png;base64,")`)
	shown := p.eval("reading the badge", `document.querySelector("mat-dialog-container img").src.split(",")[1]`)
	assert.Equal(t, base64.StdEncoding.EncodeToString(srv.load(t, sessionID, "badge.png", 0)), shown, "the dialog shows the saved image")
	p.click("closing the dialog", `document.querySelector("mat-dialog-container button.close-button")`)
	p.waitFor("the dialog is closed", `!document.querySelector("mat-dialog-container")`)
	summary := runscript.ArtifactName("dist/data/summary.json")
	p.waitFor("the panel lists the file from the subfolder at version 2", artifactBox(summary)+`?.querySelector("mat-select")?.textContent.trim() === "2"`)
	got := p.download(summary)
	assert.Equal(t, srv.load(t, sessionID, "dist/data/summary.json", 2), got)
	assert.Contains(t, string(got), `"Bob"`)
	p.click("choosing version 1", artifactBox(summary)+`?.querySelector(".mat-mdc-select-trigger")`)
	p.waitFor("the versions are offered", `[...document.querySelectorAll("mat-option")].some(o => o.textContent.trim() === "1")`)
	p.click("picking version 1", `[...document.querySelectorAll("mat-option")].find(o => o.textContent.trim() === "1")`)
	p.waitFor("version 1 is chosen", artifactBox(summary)+`?.querySelector("mat-select")?.textContent.trim() === "1"`)
	got = p.download(summary)
	assert.Equal(t, srv.load(t, sessionID, "dist/data/summary.json", 1), got)
	assert.Contains(t, string(got), `"Ada"`)

	// An inline script waits for the user's answer in the UI, runs when
	// approved...
	inline := func(file string) string {
		return fmt.Sprintf("run-inline bash %s\n```\nmkdir -p inline && echo \"ran $1\" > inline/$1 && echo inline-ran\n```", file)
	}
	p.typeMessage(inline("approved.txt"))
	p.waitFor("the confirmation is asked", chip("adk_request_confirmation", "bolt")+".length === 1")
	assert.NotContains(t, p.eval("reading the chat", botTextJS), "Your bash script ran", "nothing ran before the answer")
	p.click("opening the request", chip("adk_request_confirmation", "bolt")+"[0]")
	p.waitFor("the request shows the whole script", `document.querySelector(".details-panel-container")?.textContent.includes("inline/$1")`)
	p.click("closing the details", `[...document.querySelectorAll(".details-panel-container button")].find(b => b.textContent.includes("close"))`)
	p.answer("yes") // a plain answer, which the confirmation plugin reads
	p.waitFor("the approved script's summary is shown", botTextJS+`.includes("Your bash script ran: success")`)
	// The first response is the request for confirmation, the second the run.
	p.waitFor("its response is shown", chip("run_skill_inline_script", "check")+".length === 2")
	approved := runscript.ArtifactName("inline/approved.txt")
	p.waitFor("the artifacts panel lists its file", artifactBox(approved))
	assert.Equal(t, "ran approved.txt\n", string(srv.load(t, sessionID, "inline/approved.txt", 0)))

	// ...and does not run when rejected.
	p.typeMessage(inline("rejected.txt"))
	p.waitFor("the second confirmation is asked", chip("adk_request_confirmation", "bolt")+".length === 2")
	p.answer(`{"confirmed": false}`) // the JSON answer ADK reads itself
	p.waitFor("the rejection's summary is shown", botTextJS+`.includes("did not run: you did not approve it")`)
	p.waitFor("its refusal is shown", chip("run_skill_inline_script", "check")+".length === 4")
	p.click("opening the refusal", chip("run_skill_inline_script", "check")+".at(-1)")
	p.waitFor("the refusal's details are shown", `document.querySelector(".details-panel-container")?.textContent.includes("CONFIRMATION_REJECTED")`)
	_, err := srv.store.Load(context.Background(), &artifact.LoadRequest{AppName: webAgentName, UserID: "user", SessionID: sessionID,
		FileName: runscript.ArtifactName("inline/rejected.txt")})
	assert.True(t, errors.Is(err, os.ErrNotExist), "the rejected script wrote nothing: %v", err)

	var elsewhere []string
	sawFonts := false
	for _, u := range p.requested() {
		if u.Scheme == "data" || u.Scheme == "blob" || u.Hostname() == "127.0.0.1" {
			continue
		}
		sawFonts = sawFonts || u.Hostname() == "fonts.gstatic.com"
		if !slices.Contains(externalHosts, u.Hostname()) {
			elsewhere = append(elsewhere, u.String())
		}
	}
	assert.Empty(t, elsewhere, "the page loads from hosts docs/web-ui.md does not name")
	assert.True(t, sawFonts, "docs/web-ui.md says the page loads its fonts from fonts.gstatic.com")
	t.Logf("browser test took %v", time.Since(start).Round(time.Millisecond))
}
