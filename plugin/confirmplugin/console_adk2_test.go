//go:build ignore

package confirmplugin_test

// plainConsole is ADK v2's console launcher without the plugin: it asks for
// the confirmation itself (without the hint) and reads the answer, so the
// script runs.
var plainConsole = consoleWant{
	want:    []string{"Confirm run_skill_inline_script?", "model saw success: inline-ran"},
	notWant: []string{"needs your approval", "model saw the text"},
}
