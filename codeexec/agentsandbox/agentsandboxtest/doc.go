// Package agentsandboxtest is a fake kubernetes-sigs/agent-sandbox cluster
// for tests of code that runs scripts with codeexec/agentsandbox, in the
// spirit of net/http/httptest: no cluster, no container runtime, real
// processes.
//
// agent-sandbox's own fake clientsets carry the claim lifecycle, and a
// reactor plays the controller. Each claim gets a "pod" of its own: a real
// sandboxd process listening on a loopback address of its own (127.77.x.y)
// with a temporary root, inside a PID namespace (unshare), so that deleting
// the claim kills everything a run left in the pod, as deleting a pod does.
// A small warm pool of pods is kept started, as a SandboxWarmPool keeps
// sandboxes ready. A fake API server on loopback brokers port-forwards to
// the pods, as the real one does for kubectl port-forward.
//
// It runs on Linux, as root or where unprivileged user namespaces are
// allowed, with unshare (util-linux) installed. The sandboxd binary is
// $ADKSKILLS_SANDBOXD, or built by [Main] from the agent-sandbox module the
// test's build list selects:
//
//	func TestMain(m *testing.M) { os.Exit(agentsandboxtest.Main(m)) }
package agentsandboxtest
