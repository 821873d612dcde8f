package confirmplugin_test

// plainConsole is ADK v1.7.0's console launcher without the plugin: the
// confirmation request prints as an empty line, the "y" typed next reaches
// the model as text, and the script never runs.
var plainConsole = consoleWant{
	want:    []string{`model saw the text "y\n"`},
	notWant: []string{"needs your approval", "inline-ran"},
}
