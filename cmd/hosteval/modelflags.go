package main

import (
	"cmp"
	"flag"
	"strings"

	"github.com/hosteval/hosteval/internal/model/replay"
	"github.com/hosteval/hosteval/internal/runner"
)

// modelFlags are run's flags for real models: cassettes and the response
// cache.
type modelFlags struct {
	record string
	replay replayFlag
	cache  boolFlag
	// cacheDir is the response cache's folder.
	cacheDir string
}

// replayFlag is -replay: a folder to replay from, or a mode (fallback,
// strict), or both when given twice.
type replayFlag struct {
	dir  string
	mode replay.Mode
	set  bool
}

func (f *replayFlag) String() string {
	if f == nil {
		return ""
	}
	return f.dir
}

func (f *replayFlag) Set(v string) error {
	f.set = true
	switch v {
	case "fallback":
		f.mode = replay.Fallback
	case "strict":
		f.mode = replay.Replay
	default:
		f.dir = v
	}
	return nil
}

// boolFlag is a bool flag that knows whether it was given.
type boolFlag struct {
	value, set bool
}

func (f *boolFlag) String() string {
	if f == nil || !f.value {
		return "false"
	}
	return "true"
}

func (f *boolFlag) Set(v string) error {
	b, err := parseBool(v)
	if err != nil {
		return err
	}
	f.value, f.set = b, true
	return nil
}

func (*boolFlag) IsBoolFlag() bool { return true }

func parseBool(v string) (bool, error) {
	switch strings.ToLower(v) {
	case "1", "t", "true", "on", "yes":
		return true, nil
	case "0", "f", "false", "off", "no":
		return false, nil
	}
	return false, usagef("%q is not a boolean", v)
}

func (m *modelFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&m.record, "record", "", "record every model request into cassettes in this `folder` (one file per case), replacing what is there")
	fs.Var(&m.replay, "replay", "replay model requests from the cassettes in this `folder`; a request not recorded fails its case with what changed; -replay=fallback sends it to the endpoint and appends it instead (alone: into each scenario's cassettes folder)")
	fs.Var(&m.cache, "cache", "answer model requests seen before from the response cache (default off; HOSTEVAL_CACHE=on turns it on outside CI)")
	fs.StringVar(&m.cacheDir, "cache-dir", "", "the response cache's `folder` (default: the user cache folder's hosteval/responses)")
}

// cassettes is the run's choice of cassettes, nil to keep the scenarios'.
func (m *modelFlags) cassettes() (*runner.Cassettes, error) {
	switch {
	case m.record != "" && m.replay.set:
		return nil, usagef("-record and -replay: want one of them")
	case m.record != "":
		return &runner.Cassettes{Dir: m.record, Mode: replay.Record}, nil
	case !m.replay.set:
		return nil, nil
	}
	c := &runner.Cassettes{Dir: m.replay.dir, Mode: m.replay.mode}
	if c.Mode == "" {
		c.Mode = replay.Replay
	}
	return c, nil
}

// openCache opens the response cache when it is on: asked for with
// -cache, or by HOSTEVAL_CACHE=on outside CI. HOSTEVAL_CACHE=off and CI
// keep it off unless -cache asks; a CI run replays cassettes, it does not
// trust a cache.
func (m *modelFlags) openCache(getenv func(string) string) (*replay.Cache, error) {
	on := m.cache.value
	if !m.cache.set {
		env, err := parseBool(cmp.Or(getenv("HOSTEVAL_CACHE"), "off"))
		if err != nil {
			return nil, usagef("HOSTEVAL_CACHE: %v", err)
		}
		ci, _ := parseBool(cmp.Or(getenv("CI"), "false"))
		on = env && !ci
	}
	if !on {
		return nil, nil
	}
	dir := m.cacheDir
	if dir == "" {
		var err error
		if dir, err = replay.DefaultCacheDir(); err != nil {
			return nil, usagef("-cache: %v (give -cache-dir)", err)
		}
	}
	c, err := replay.OpenCache(dir)
	if err != nil {
		return nil, usagef("-cache-dir: %v", err)
	}
	return c, nil
}
