package host

import (
	"sync"
	"syscall"
)

// ProcessGroups holds the process groups of live stdio servers, so that
// whoever owns it (a command, a batch run) can kill every server at once,
// grandchildren included, when it must exit now (a second Ctrl-C). Each
// stdio server leads a group of its own; a server behind `sh -c`, or a
// helper it started, is in that group. The zero value is not usable: use
// [NewProcessGroups]. It is safe for concurrent use.
type ProcessGroups struct {
	mu     sync.Mutex
	pgids  map[int]struct{}
	killed bool
}

// NewProcessGroups returns an empty registry.
func NewProcessGroups() *ProcessGroups {
	return &ProcessGroups{pgids: map[int]struct{}{}}
}

// add registers the group led by pid. After Kill, a group is killed as it
// is added: a server that starts while the owner is exiting must not
// outlive it.
func (g *ProcessGroups) add(pid int) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.killed {
		killGroup(pid)
		return
	}
	g.pgids[pid] = struct{}{}
}

// remove forgets the group led by pid, once its server is stopped.
func (g *ProcessGroups) remove(pid int) {
	if g == nil {
		return
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	delete(g.pgids, pid)
}

// has reports whether pid leads a registered group: it is a server.
func (g *ProcessGroups) has(pid int) bool {
	if g == nil {
		return false
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	_, ok := g.pgids[pid]
	return ok
}

// Kill sends SIGKILL to every registered group, and to every group
// registered after it, and returns how many it signalled. The servers'
// hosts see them die and reap them.
func (g *ProcessGroups) Kill() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.killed = true
	for pgid := range g.pgids {
		killGroup(pgid)
	}
	return len(g.pgids)
}

// Len is the number of live groups.
func (g *ProcessGroups) Len() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return len(g.pgids)
}

func killGroup(pgid int) {
	signalGroup(pgid, syscall.SIGKILL)
}
