// Package deploy holds the recipes that run hosteval elsewhere than a
// developer's machine (deploy/kubernetes) and no code. Its tests check that
// all of the repository's shipping recipes agree with each other and with
// the code they ship: the Makefile's release, .goreleaser.yaml and
// tools/releasecheck name the same platforms; the Makefile and the
// Dockerfile build the same fixture servers; the Dockerfile's Node is the
// one tools/node pins and its image runs as a non-root user; action.yml
// declares every input it reads and passes none into a script unquoted; the
// sharded workflow and the Kubernetes Indexed Job split into as many shards
// as they say.
package deploy
