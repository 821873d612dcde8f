package skillfs

import "gopkg.in/yaml.v3"

// allowedTools prepares an allowed-tools value for ADK's parser. ADK v1
// reads both forms itself: the specification's string of tools separated by
// spaces or commas, and the list earlier clients write. So the value goes
// to it unchanged; allowedtools_adk2.go splits the string for ADK v2, which
// reads only the list.
func allowedTools(*yaml.Node) error { return nil }
