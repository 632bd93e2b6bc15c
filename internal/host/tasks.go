package host

// Tools that only run as tasks. A tool whose execution.taskSupport is
// "required" must be called with task augmentation, which this host does
// not implement: every call of it fails ("requires task augmentation",
// server-everything's simulate-research-query, docs/peers.md #7). The go-sdk
// drops the execution field from mcp.Tool, so the host reads it from the
// tools as the server listed them (see watch.go and list.go), over every
// transport, and does not offer such tools to the model.

// taskOnlyTools returns the namespaced names of the tools of connected
// servers that require task augmentation.
func taskOnlyTools(servers []*serverConn) []string {
	var names []string
	for _, s := range servers {
		if !s.listed() {
			continue
		}
		for _, name := range s.currentListing().taskOnly {
			names = append(names, Namespaced(s.spec.Name, name))
		}
	}
	return names
}
