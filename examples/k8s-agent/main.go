// Command k8s-agent is an example ADK agent to run on Kubernetes. It serves
// ADK's web UI (/ui/) and REST API (/api/) with the skills baked into its
// image, and runs every script in a fresh pod of a kubernetes-sigs/agent-sandbox
// warm pool, through codeexec/agentsandbox. At start it probes the pool
// with one claim round trip, and refuses to start, saying what to fix, when
// no script could run. deploy/agent/ deploys it beside the sandboxes of
// deploy/agent-sandbox/; docs/kubernetes.md walks the whole path.
//
// Every flag can come from the environment, as a Deployment sets it:
//
//	--skills DIR      SKILLS_DIR               the skills (default /skills, where the image has them)
//	--warm-pool POOL  AGENT_SANDBOX_POOL       the SandboxWarmPool (default adkskills-pool)
//	--namespace NS    AGENT_SANDBOX_NAMESPACE  the pool's namespace, the agent's own (default "default")
//	--port PORT       PORT                     the HTTP port (default 8080)
//	--model MODEL     GEMINI_MODEL             the Gemini model (default gemini-2.5-flash), with GOOGLE_API_KEY
//	--demo            DEMO_MODEL=true          the keyless demo model: "run SKILL SCRIPT [ARGS...]" runs it
//
// In a pod it reaches the sandboxes by pod IP, which the sandbox template's
// NetworkPolicy admits for the agent's pods; anywhere else (go run with
// KUBECONFIG, to try it) through port-forwards the API server brokers.
//
// The example keeps sessions and artifacts in memory, so it runs as one
// replica; docs/kubernetes.md says what replicated agents use instead.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"github.com/go-logr/logr"
	"google.golang.org/adk/agent"
	"google.golang.org/adk/agent/llmagent"
	"google.golang.org/adk/artifact"
	"google.golang.org/adk/cmd/launcher"
	weblauncher "google.golang.org/adk/cmd/launcher/web"
	"google.golang.org/adk/cmd/launcher/web/api"
	"google.golang.org/adk/cmd/launcher/web/webui"
	"google.golang.org/adk/model"
	"google.golang.org/adk/model/gemini"
	"google.golang.org/adk/session"
	"google.golang.org/adk/tool"
	"google.golang.org/genai"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	"sigs.k8s.io/agent-sandbox/clients/go/sandbox"

	"github.com/adkskills/adkskills/codeexec"
	"github.com/adkskills/adkskills/codeexec/agentsandbox"
	"github.com/adkskills/adkskills/model/scripted"
	"github.com/adkskills/adkskills/skilltoolset"
)

// scriptTimeout is the time limit of one script run. A turn may take it
// and the model's calls around it: the server's write timeouts allow that.
const (
	scriptTimeout = 2 * time.Minute
	writeTimeout  = scriptTimeout + 2*time.Minute
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg, err := parseConfig(os.Args[1:], os.Getenv)
	if errors.Is(err, flag.ErrHelp) {
		return
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "k8s-agent:", err)
		os.Exit(2)
	}
	if err := run(ctx, cfg); err != nil {
		fmt.Fprintln(os.Stderr, "k8s-agent:", err)
		os.Exit(1)
	}
}

// config is what the flags and the environment say.
type config struct {
	skills, pool, namespace, model string
	port                           int
	demo                           bool
}

// parseConfig reads the flags, each defaulting to its environment variable.
func parseConfig(args []string, getenv func(string) string) (config, error) {
	env := func(name, def string) string {
		if v := getenv(name); v != "" {
			return v
		}
		return def
	}
	var cfg config
	port, err := strconv.Atoi(env("PORT", "8080"))
	if err != nil {
		return cfg, fmt.Errorf("PORT: %w", err)
	}
	demo, err := strconv.ParseBool(env("DEMO_MODEL", "false"))
	if err != nil {
		return cfg, fmt.Errorf("DEMO_MODEL: %w", err)
	}
	fs := flag.NewFlagSet("k8s-agent", flag.ContinueOnError)
	fs.StringVar(&cfg.skills, "skills", env("SKILLS_DIR", "/skills"), "the folder of skill folders")
	fs.StringVar(&cfg.pool, "warm-pool", env("AGENT_SANDBOX_POOL", "adkskills-pool"), "the SandboxWarmPool scripts run in")
	fs.StringVar(&cfg.namespace, "namespace", env("AGENT_SANDBOX_NAMESPACE", "default"), "the warm pool's namespace")
	fs.IntVar(&cfg.port, "port", port, "the HTTP port")
	fs.StringVar(&cfg.model, "model", env("GEMINI_MODEL", "gemini-2.5-flash"), "the Gemini model")
	fs.BoolVar(&cfg.demo, "demo", demo, "the keyless demo model instead of Gemini")
	if err := fs.Parse(args); err != nil {
		return cfg, err
	}
	switch {
	case fs.NArg() > 0:
		return cfg, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	case cfg.port < 1 || cfg.port > 65535:
		return cfg, fmt.Errorf("--port %d: not a port", cfg.port)
	case !cfg.demo && getenv("GOOGLE_API_KEY") == "" && getenv("GEMINI_API_KEY") == "" && getenv("GOOGLE_GENAI_USE_VERTEXAI") == "":
		return cfg, errors.New("no Gemini credentials: set GOOGLE_API_KEY (the Secret adk-agent-gemini of deploy/agent/deployment.yaml) or GOOGLE_GENAI_USE_VERTEXAI, or DEMO_MODEL=true for the keyless demo model")
	}
	return cfg, nil
}

// run starts the agent and serves it until ctx ends.
func run(ctx context.Context, cfg config) error {
	exe, err := newExecutor(ctx, cfg)
	if err != nil {
		return err
	}
	// Fail now, saying what to fix, rather than at the first script.
	if err := exe.Probe(ctx); err != nil {
		return err
	}
	log.Printf("k8s-agent: scripts run in warm pool %s, namespace %s", cfg.pool, cfg.namespace)
	return serve(ctx, cfg, exe)
}

// newExecutor returns the agent-sandbox executor on the cluster the pod's
// service account names (or, outside a pod, KUBECONFIG).
func newExecutor(ctx context.Context, cfg config) (*agentsandbox.Executor, error) {
	restConfig, inCluster, err := kubeConfig()
	if err != nil {
		return nil, err
	}
	helper, err := sandbox.NewK8sHelper(restConfig, logr.Discard())
	if err != nil {
		return nil, err
	}
	client, err := sandbox.NewClient(ctx, sandbox.Options{
		Runtime:      sandbox.RuntimeSandboxd,
		Connectivity: sandbox.ConnectivityInClusterPodIP, // the executor reaches sandboxd itself
		K8sHelper:    helper,
		Quiet:        true,
	})
	if err != nil {
		return nil, err
	}
	opts := []agentsandbox.Option{
		agentsandbox.WithNamespace(cfg.namespace),
		agentsandbox.WithKubernetes(helper), // a missing pool fails at once
	}
	if !inCluster {
		opts = append(opts, agentsandbox.WithPortForward())
	}
	return agentsandbox.New(client, cfg.pool, opts...), nil
}

// kubeConfig returns the pod's service account's configuration, else the
// kubeconfig's, and whether it is the pod's.
func kubeConfig() (*rest.Config, bool, error) {
	if c, err := rest.InClusterConfig(); err == nil {
		return c, true, nil
	}
	c, err := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(clientcmd.NewDefaultClientConfigLoadingRules(), nil).ClientConfig()
	if err != nil {
		return nil, false, fmt.Errorf("not in a pod, and no kubeconfig to reach a cluster with (KUBECONFIG): %w", err)
	}
	return c, false, nil
}

// serve serves the agent, whose scripts exe runs, in ADK's web UI and REST
// API until ctx ends.
func serve(ctx context.Context, cfg config, exe codeexec.Executor) error {
	skills, err := skilltoolset.New(ctx, skilltoolset.NewFSSource(os.DirFS(cfg.skills)),
		skilltoolset.WithCodeExecutor(exe),
		skilltoolset.WithScriptTimeout(scriptTimeout))
	if err != nil {
		return err
	}
	var llm model.LLM = scripted.NewDemo()
	if !cfg.demo {
		if llm, err = gemini.NewModel(ctx, cfg.model, &genai.ClientConfig{}); err != nil {
			return err
		}
	}
	a, err := llmagent.New(llmagent.Config{
		Name:        "skills_agent",
		Description: "An assistant that runs Agent Skills' scripts in sandboxed pods.",
		Model:       llm,
		Instruction: "Use the skills when they fit the request, run their scripts with the tools you have, and tell the user which artifacts (files) a run saved.",
		Toolsets:    []tool.Toolset{skills},
	})
	if err != nil {
		return err
	}
	l := weblauncher.NewLauncher(api.NewLauncher(), webui.NewLauncher())
	timeout := writeTimeout.String()
	left, err := l.Parse([]string{"--port", strconv.Itoa(cfg.port), "--write-timeout", timeout,
		"api", "--sse-write-timeout", timeout, "webui", "--api_server_address", "/api"})
	if err != nil {
		return err
	}
	if len(left) > 0 {
		return fmt.Errorf("the web launcher left arguments unparsed: %q", left)
	}
	return l.Run(ctx, &launcher.Config{
		SessionService:  session.InMemoryService(),
		ArtifactService: artifact.InMemoryService(),
		AgentLoader:     agent.NewSingleLoader(a),
	})
}
